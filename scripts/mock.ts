// `npm run mock`: writes the mock's document (scripts/lib/mock-document.ts) for the address the mock answers at, then
// runs Prism on it, answering the examples only (--dynamic=false) and without Prism's own CORS headers (--cors=false:
// the document carries the server's), on a private loopback port behind the mock's front (scripts/lib/mock-front.ts),
// which listens on the mock's address and sends the authorization endpoint's redirect where the request asked.
//
//   npm run mock                                   # http://127.0.0.1:4010
//   npm run mock -- --port 4011                    # another port; the examples name it
//   npm run mock -- --base-url https://mock.example.test   # behind a proxy: the address clients use
//
// Any other argument goes to `prism mock` as it is. SIGINT or SIGTERM stops both processes and removes the document;
// Prism ending on its own ends the mock with a non-zero status.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { defaultMockPort, writeMockDocument } from './lib/mock-document.js';
import { createMockFront, exampleApplications } from './lib/mock-front.js';
import { repoRoot } from './lib/paths.js';
import { freePort } from './lib/processes.js';

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

const port = Number(values.port);
const host = String(values.host);
const baseUrl = typeof values['base-url'] === 'string' ? values['base-url'] : `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
const file = await writeMockDocument(join(repoRoot, '.tmp/mock', `openapi-${port}.yaml`), baseUrl);
console.log(`mock document for ${baseUrl}: ${file}`);

const prism = { host: '127.0.0.1', port: await freePort() };
const prismCli = join(repoRoot, 'node_modules/@stoplight/prism-cli/dist/index.js');
// Prism ends when this process does, even one killed outright (SIGKILL runs no handler here): its IPC channel to this
// process closes, and the module loaded first makes it exit then. Unref'd, so the channel alone keeps nothing running.
const exitWithParent = `data:text/javascript,${encodeURIComponent("process.on('disconnect', () => process.exit(1)); process.channel?.unref();")}`;
const child = spawn(process.execPath, ['--import', exitWithParent, prismCli, 'mock', file, '--dynamic=false', '--cors=false', '-h', prism.host, '-p', String(prism.port), ...passThrough], {
  stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
});
// Prism's log names its own address; the reader's is the front's.
const privateAddress = `http://${prism.host}:${prism.port}`;
for (const [from, to] of [[child.stdout!, process.stdout], [child.stderr!, process.stderr]] as const) {
  createInterface({ input: from, crlfDelay: Infinity }).on('line', (line) => to.write(`${line.split(privateAddress).join(baseUrl)}\n`));
}

let stopping = false;
let status = 0;
child.on('exit', (code, signal) => {
  if (!stopping) console.error(`Prism ended (${code ?? signal}): the mock stops.`);
  front.close();
  front.closeAllConnections();
  // The document is made for this run (and this address) only.
  rmSync(file, { force: true });
  process.exit(stopping ? status : code || 1);
});

/** Resolves once Prism accepts connections, asking every 100 ms. */
const prismReady = new Promise<void>((resolve) => {
  const attempt = () => {
    const socket = connect(prism.port, prism.host);
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', () => setTimeout(attempt, 100));
  };
  attempt();
});

const front = createMockFront({ prism, prismReady, applications: exampleApplications(baseUrl) });
front.once('error', (error) => {
  console.error(`The mock cannot listen on ${host}:${port}: ${error.message}`);
  stopping = true;
  status = 1;
  child.kill('SIGTERM');
});
front.listen(port, host);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stopping = true;
    child.kill(signal);
  });
}
