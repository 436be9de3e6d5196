// The ceiling for the read benchmark: the same route answering the same JSON through Express 5, with nothing else
// (no parsing, authentication, validation or store). Run as its own process: `node --import tsx ceiling.ts PORT`.
import express from 'express';

const port = Number(process.argv[2]);
// What the reference server answers for a user with no stored setting (presentGlobal's default).
const body = JSON.parse(process.argv[3] ?? '{}') as unknown;

const app = express();
app.disable('x-powered-by');
app.get('/api/v3/notification_settings', (_req, res) => {
  res.json(body);
});
const server = app.listen(port, '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
