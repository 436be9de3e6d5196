// Runs a command module as `node` would, then, as the process exits, writes to stderr which npm packages loaded
// through require (express, pg, pino and the rest of the server are CommonJS, so each shows here once loaded).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
process.on('exit', () => {
  const packages = Object.keys(require.cache)
    .filter((path) => path.includes('/node_modules/'))
    .map((path) => path.split('/node_modules/').pop().split('/')[0]);
  process.stderr.write(`\nloaded packages: ${JSON.stringify([...new Set(packages)].sort())}\n`);
});
const [, , entry, ...args] = process.argv;
process.argv = [process.argv[0], entry, ...args];
await import(entry);
