// The ceiling: the same routes answering the same JSON through Express 5, with nothing else (no authentication,
// validation or store). Run as its own process, compiled (lib/servers.ts): `node ceiling.mjs PORT [GET_ANSWER] [FORM_ANSWERS]`.
// GET /api/v3/notification_settings answers GET_ANSWER (the read benchmark's ceiling); FORM_ANSWERS, a JSON object
// of path -> answer, adds form POSTs (the token endpoint's ceiling): the urlencoded body parsed as a real endpoint
// must, then the same-shaped JSON with no-store, as the OAuth endpoints answer.
import express from 'express';

const port = Number(process.argv[2]);
// What the reference server answers for a user with no stored setting (presentGlobal's default).
const body = JSON.parse(process.argv[3] ?? '{}') as unknown;
const forms = JSON.parse(process.argv[4] ?? '{}') as Record<string, unknown>;

const app = express();
app.disable('x-powered-by');
app.get('/api/v3/notification_settings', (_req, res) => {
  res.json(body);
});
for (const [path, answer] of Object.entries(forms)) {
  app.post(path, express.urlencoded({ extended: false }), (_req, res) => {
    res.set('cache-control', 'no-store').json(answer);
  });
}
const server = app.listen(port, '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
