// The `npm run mock` of docs/mock.md, with a port of the reader's choosing: the script must leave the port to its caller, send
// the authorization redirect where the request asked, and leave nothing running once stopped, however it is stopped.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { callbackParams, generateState } from '../../packages/sdk/src/index.js';
import { exampleApplication } from '../../packages/server/test/support/example-seed.js';
import { repoRoot } from '../../scripts/lib/paths.js';
import { freePort, waitForHttp } from '../../scripts/lib/processes.js';

interface Mock {
  child: ChildProcess;
  port: number;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `command` in a process group of its own (npm starts a shell that starts tsx, the script and Prism). */
async function startMock(command: string, args: string[]): Promise<Mock> {
  const port = await freePort();
  const child = spawn(command, [...args, '--port', String(port)], { cwd: repoRoot, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const mock = { child, port, output: () => output, exited };
  try {
    await waitForHttp(`${command} ${args.join(' ')}`, mock, `http://127.0.0.1:${port}/.well-known/oauth-authorization-server`, { timeoutMs: 30_000 });
  } catch (error) {
    killGroup(child, 'SIGKILL');
    throw error;
  }
  return mock;
}

const killGroup = (child: ChildProcess, signal: NodeJS.Signals) => {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // The group is empty already.
  }
};

/** The processes still in the mock's process group (the script's Prism is in it too): none once it has stopped. */
async function leftInGroup(child: ChildProcess): Promise<number[]> {
  // A process that is exiting may be there for a moment after its parent has gone.
  for (let attempt = 0; ; attempt += 1) {
    const pids = processesInGroup(child.pid!);
    if (pids.length === 0 || attempt === 20) return pids;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function processesInGroup(pgid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        // Field 5 of /proc/<pid>/stat is the process group, after the name in parentheses (which may hold spaces).
        const stat = readFileSync(join('/proc', pid, 'stat'), 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === pgid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The script's children (its Prism), from /proc. */
const childrenOf = (pid: number) =>
  readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
    .split(' ')
    .filter(Boolean)
    .map(Number);

it('npm run mock -- --port N serves the mock document for that port on it, and Ctrl-C leaves nothing running', async () => {
  const mock = await startMock('npm', ['run', 'mock', '--']);
  const { port } = mock;
  try {
    // The mock's own address in its discovery documents, and the API under /api/v4 as under /api/v3.
    const metadata = (await (await fetch(`http://127.0.0.1:${port}/.well-known/oauth-authorization-server`)).json()) as { issuer: string; token_endpoint: string };
    expect(metadata).toMatchObject({ issuer: `http://127.0.0.1:${port}`, token_endpoint: `http://127.0.0.1:${port}/oauth/token` });
    const user = await fetch(`http://127.0.0.1:${port}/api/v4/user`, { headers: { 'PRIVATE-TOKEN': 'any' } });
    expect(user.status).toBe(200);
    // Prism's own CORS headers are off (the document carries the server's): no credentials, any origin.
    expect(user.headers.get('access-control-allow-credentials')).toBeNull();
    expect(user.headers.get('access-control-allow-origin')).toBe('*');

    // The README's sign-in through the mock, with the app's own random state: back to its redirect URI with that state.
    const state = generateState();
    const query = new URLSearchParams({ client_id: exampleApplication.clientId, redirect_uri: exampleApplication.redirectUri, response_type: 'code', state });
    const redirect = await fetch(`http://127.0.0.1:${port}/oauth/authorize?${query}&__code=302`, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get('location') ?? '';
    expect(location.startsWith(`${exampleApplication.redirectUri}?`), location).toBe(true);
    const { code } = callbackParams(location);
    expect(callbackParams(location).state).toBe(state);
    // The code is exchanged at the mock's token endpoint.
    const body = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: exampleApplication.redirectUri, client_id: exampleApplication.clientId, client_secret: exampleApplication.clientSecret });
    const token = await fetch(`http://127.0.0.1:${port}/oauth/token`, { method: 'POST', body });
    expect(token.status).toBe(200);
    expect(await token.json()).toMatchObject({ access_token: expect.any(String), token_type: 'bearer' });
  } finally {
    // What Ctrl-C in a terminal does: SIGINT to every process of the foreground group.
    killGroup(mock.child, 'SIGINT');
    await mock.exited;
  }
  expect(await leftInGroup(mock.child), mock.output()).toEqual([]);
  // Nor the document it wrote for its address.
  expect(existsSync(join(repoRoot, '.tmp/mock', `openapi-${port}.yaml`))).toBe(false);
}, 60_000);

it('the mock script stopped alone, by SIGTERM or SIGKILL, takes its Prism with it', async () => {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    const mock = await startMock(process.execPath, ['--import', 'tsx', 'scripts/mock.ts']);
    try {
      expect(childrenOf(mock.child.pid!), 'its Prism').toHaveLength(1);
      mock.child.kill(signal);
      expect(await mock.exited).toEqual(signal === 'SIGTERM' ? { code: 0, signal: null } : { code: null, signal });
      expect(await leftInGroup(mock.child), `${signal}\n${mock.output()}`).toEqual([]);
    } finally {
      killGroup(mock.child, 'SIGKILL');
    }
  }
}, 90_000);

it('the mock script ends with a non-zero status when its Prism dies', async () => {
  const mock = await startMock(process.execPath, ['--import', 'tsx', 'scripts/mock.ts']);
  try {
    const [prism] = childrenOf(mock.child.pid!);
    process.kill(prism!, 'SIGKILL');
    expect(await mock.exited).toEqual({ code: 1, signal: null });
    expect(mock.output()).toContain('Prism ended (SIGKILL): the mock stops.');
    expect(await leftInGroup(mock.child)).toEqual([]);
  } finally {
    killGroup(mock.child, 'SIGKILL');
  }
}, 60_000);
