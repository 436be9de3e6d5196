// `npm run mock`: writes the mock's document (scripts/lib/mock-document.ts) for the address the mock answers at, then
// runs Prism on it, answering the examples only (--dynamic=false) and without Prism's own CORS headers (--cors=false:
// the document carries the server's).
//
//   npm run mock                                   # http://127.0.0.1:4010
//   npm run mock -- --port 4011                    # another port; the examples name it
//   npm run mock -- --base-url https://mock.example.test   # behind a proxy: the address clients use
//
// Any other argument goes to `prism mock` as it is.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultMockPort, writeMockDocument } from './lib/mock-document.js';
import { repoRoot } from './lib/paths.js';

const { values, tokens } = parseArgs({
  options: {
    port: { type: 'string', short: 'p', default: String(defaultMockPort) },
    host: { type: 'string', short: 'h', default: '127.0.0.1' },
    'base-url': { type: 'string' },
  },
  strict: false,
  allowPositionals: true,
  tokens: true,
});
const known = new Set(['port', 'host', 'base-url']);
const passThrough = tokens.flatMap((t) => (t.kind === 'positional' ? [t.value] : t.kind === 'option' && !known.has(t.name) ? [t.rawName, ...(t.value === undefined ? [] : [t.value])] : []));

const port = String(values.port);
const host = String(values.host);
const baseUrl = typeof values['base-url'] === 'string' ? values['base-url'] : `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
const file = await writeMockDocument(join(repoRoot, '.tmp/mock', `openapi-${port}.yaml`), baseUrl);
console.log(`mock document for ${baseUrl}: ${file}`);

const prism = join(repoRoot, 'node_modules/@stoplight/prism-cli/dist/index.js');
const child = spawn(process.execPath, [prism, 'mock', file, '--dynamic=false', '--cors=false', '-h', host, '-p', port, ...passThrough], { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
