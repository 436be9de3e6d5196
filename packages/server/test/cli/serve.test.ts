// `tokenbell --test-helpers`, started as a suite's CI starts it, then called at once: the port answers before the
// start has made the test-helper area's administrator (serve.ts), and a request that comes meanwhile must wait for
// it rather than be refused. A suite that polls its first helper call, not readiness, meets that moment every time.
import http from 'node:http';
import { afterAll, expect, inject, it } from 'vitest';
import { freePort, spawnProcess, stopProcess, type SpawnedProcess } from '../../../../scripts/lib/processes.js';

const token = 'tbpat-serve-test-administrator-token-000000';
let server: SpawnedProcess | undefined;
afterAll(() => (server ? stopProcess(server.child) : undefined));

/** One POST to the reset helper: its status, or undefined while nothing listens. */
const reset = (port: number) =>
  new Promise<number | undefined>((resolve) => {
    const request = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/api/v4/test_helpers/reset', headers: { 'PRIVATE-TOKEN': token }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    request.on('error', () => resolve(undefined));
    request.end();
  });

it("answers the test-helper area's first request, made as soon as the port accepts one, with its administrator made", async () => {
  const port = await freePort();
  server = spawnProcess(process.execPath, [inject('serverCli'), '--memory', '--host', '127.0.0.1', '--port', String(port), '--test-helpers', '--log-level', 'warn'], {
    env: { TOKENBELL_TEST_HELPERS_TOKEN: token, TOKENBELL_DEMO: 'off' },
  });
  let status: number | undefined;
  const deadline = Date.now() + 30_000;
  while (status === undefined && Date.now() < deadline) {
    if (server.child.exitCode !== null) throw new Error(`tokenbell exited (${server.child.exitCode}):\n${server.output()}`);
    status = await reset(port);
    if (status === undefined) await new Promise((resolve) => setTimeout(resolve, 2));
  }
  expect(status, server.output()).toBe(204);
});
