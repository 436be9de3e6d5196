// SIGTERM as a process manager sends it: requests in flight finish with their real answers while readiness says 503
// and new connections are refused, and what is still running when --shutdown-timeout runs out is cut. The requests
// are held in flight by the test-helper area's delay faults. On the data file in `tests`, on PostgreSQL in `postgres`.
import { readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cliStore, exampleSeed, startCli, stopCli, tempDir, type CliProcess } from './support.js';

const pat = 'tbpat-jsmith-example-token-000000000000000000';
const adminPat = 'tbpat-admin-shutdown-token-00000000000000000';

const started: CliProcess[] = [];
const drops: Array<() => Promise<void>> = [];
afterEach(async () => {
  // The servers first: a database is dropped once nobody is connected.
  await Promise.all(started.splice(0).map((cli) => stopCli(cli, 'SIGKILL')));
  await Promise.all(drops.splice(0).map((drop) => drop()));
});

let dir: Awaited<ReturnType<typeof tempDir>>;
let seedFile: string;
beforeAll(async () => {
  dir = await tempDir();
  // The example fixture with an administrator, who may queue faults.
  const fixture = JSON.parse(await readFile(exampleSeed, 'utf8')) as { users: object[] };
  fixture.users.push({ username: 'root', email: 'root@example.com', name: 'Root', password: 'root-password-long-enough', is_admin: true, personal_access_tokens: [{ name: 'faults', token: adminPat, scopes: ['api'] }] });
  seedFile = join(dir.path, 'seed.json');
  await writeFile(seedFile, JSON.stringify(fixture));
});
afterAll(() => dir.remove());

interface Answer {
  status: number;
  connection: string | undefined;
  body: string;
  /** Whether the request went out on a connection an earlier request had opened. */
  reused: boolean;
}

/** A GET on `agent`'s connections; rejects when the connection is cut. */
function get(cli: CliProcess, path: string, headers: Record<string, string>, agent: http.Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port: cli.port, path, headers, agent }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, connection: response.headers.connection, body, reused: request.reusedSocket }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

async function queueDelay(cli: CliProcess, method: string, path: string, delayMs: number): Promise<void> {
  const response = await fetch(`${cli.baseUrl}/api/v3/test_helpers/faults`, {
    method: 'POST',
    headers: { 'private-token': adminPat, 'content-type': 'application/json' },
    body: JSON.stringify({ match: { method, path }, answer: { delay_ms: delayMs } }),
  });
  expect(response.status, await response.text()).toBe(201);
}

/** Until every queued fault has been taken by its request, which is then being held. */
async function untilFaultsTaken(cli: CliProcess): Promise<void> {
  for (;;) {
    const queue = (await (await fetch(`${cli.baseUrl}/api/v3/test_helpers/faults`, { headers: { 'private-token': adminPat } })).json()) as unknown[];
    if (queue.length === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** SIGTERM, then until the server says it is stopping (it closes its listener in the same turn). */
async function sigterm(cli: CliProcess): Promise<void> {
  cli.child.kill('SIGTERM');
  while (!cli.output().includes('SIGTERM: shutting down')) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 100));
}

const connect = (port: number) =>
  new Promise<string>((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });

describe('SIGTERM', () => {
  it('lets requests in flight finish with their answers, says 503 on readiness meanwhile, refuses new connections, and exits 0', async () => {
    const store = await cliStore(['--data', join(dir.path, 'drain.json')]);
    drops.push(store.drop);
    const cli = await startCli([...store.args, '--seed', seedFile, '--test-helpers']);
    started.push(cli);
    // A keep-alive connection opened before the signal, that will ask for readiness during the stop.
    const monitor = new http.Agent({ keepAlive: true, maxSockets: 1 });
    expect((await get(cli, '/-/liveness', {}, monitor)).status).toBe(200);
    await queueDelay(cli, 'GET', '/api/v3/user', 1_500);
    await queueDelay(cli, 'GET', '/-/readiness', 1_500);
    const user = get(cli, '/api/v3/user', { 'private-token': pat }, new http.Agent({ keepAlive: true }));
    const readiness = get(cli, '/-/readiness', {}, monitor);
    await untilFaultsTaken(cli);

    await sigterm(cli);
    expect(await connect(cli.port)).toBe('ECONNREFUSED');
    const answered = await user;
    expect(answered.status).toBe(200);
    expect(JSON.parse(answered.body)).toMatchObject({ username: 'jsmith' });
    const ready = await readiness;
    expect(ready.reused).toBe(true);
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.body)).toMatchObject({ status: 'failed', store_check: [{ status: 'failed', message: expect.stringMatching(/shutting down/) }] });
    // Told not to send another request on it, rather than finding the connection closed under that request.
    expect(ready.connection).toBe('close');
    expect(await cli.exited).toEqual({ code: 0, signal: null });
    expect(cli.output()).not.toMatch(/cut \d+ request/);
    // Not being ready is the probe's answer, not the server's failure: a warning saying why.
    expect(cli.output()).toMatch(/"level":40[^\n]*"url":"\/-\/readiness"[^\n]*"problem":"the server is shutting down[^\n]*"msg":"not ready"/);
    // The log ends by saying so, once the requests are answered and the store closed.
    expect(cli.stdout().trim().split('\n').at(-1)).toMatch(/"msg":"stopped"/);
  }, 30_000);

  it('cuts what is still running when --shutdown-timeout runs out, then closes the store and exits 0', async () => {
    const file = join(dir.path, 'cut.json');
    const store = await cliStore(['--data', file]);
    drops.push(store.drop);
    const cli = await startCli([...store.args, '--seed', seedFile, '--test-helpers', '--shutdown-timeout', '1']);
    started.push(cli);
    await queueDelay(cli, 'GET', '/api/v3/user', 20_000);
    const user = get(cli, '/api/v3/user', { 'private-token': pat }, new http.Agent());
    await untilFaultsTaken(cli);
    const signalled = performance.now();
    await sigterm(cli);
    await expect(user).rejects.toThrow(/socket hang up|ECONNRESET/);
    const elapsed = performance.now() - signalled;
    expect(elapsed).toBeGreaterThanOrEqual(1_000);
    expect(elapsed).toBeLessThan(5_000);
    expect(await cli.exited).toEqual({ code: 0, signal: null });
    expect(cli.output()).toContain('cut 1 request(s) still running after --shutdown-timeout 1');
    // The store was closed, not abandoned: the data file's lock is gone.
    if (store.kind === 'file') await expect(readFile(`${file}.lock`)).rejects.toThrow(/ENOENT/);
  }, 30_000);
});
