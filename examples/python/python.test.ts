// Runs test_tokenbell.py, a Python suite of the kind a non-JavaScript app would write, against the reference server
// started as a process with --test-helpers, as such a suite's CI would start it. Under CI a missing /usr/bin/python3
// fails the test; on a workstation it skips, saying why.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { repoRoot } from '../../scripts/lib/paths.js';
import { freePort, spawnProcess, stopProcess, waitForHttp, type SpawnedProcess } from '../../scripts/lib/processes.js';

const python = '/usr/bin/python3';
const here = fileURLToPath(new URL('.', import.meta.url));
// The suite's own token for the area: no seed, the server makes the administrator it belongs to.
const adminToken = 'tbpat-python-example-admin-token-000000000000';

let server: SpawnedProcess | undefined;
let baseUrl: string;

beforeAll(async () => {
  if (!existsSync(python)) return;
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  server = spawnProcess(
    process.execPath,
    [inject('serverCli'), '--memory', '--port', String(port), '--host', '127.0.0.1', '--test-helpers', '--log-level', 'warn'],
    { cwd: repoRoot, env: { NO_COLOR: '1', FORCE_COLOR: '0', TOKENBELL_TEST_HELPERS_TOKEN: adminToken }, outputLimit: 20_000 },
  );
  await waitForHttp(`reference server :${port}`, server, `${baseUrl}/.well-known/oauth-authorization-server`, { timeoutMs: 45_000, attemptTimeoutMs: 2_000 });
});

afterAll(async () => {
  if (server) await stopProcess(server.child);
});

it('runs the Python example (unittest, standard library) against the test helpers over HTTP', async (context) => {
  if (!existsSync(python)) {
    if (process.env.CI === 'true') throw new Error(`the Python example needs ${python}, which does not exist; install it (apt-get install python3).`);
    return context.skip(`no ${python} (apt-get install python3); under CI=true this fails instead`);
  }
  const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile(
      python,
      ['-m', 'unittest', '-v', 'test_tokenbell'],
      { cwd: here, timeout: 60_000, env: { ...process.env, TOKENBELL_URL: baseUrl, TOKENBELL_TEST_HELPERS_TOKEN: adminToken } },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, output: `${stdout}${stderr}` }),
    );
  });
  // unittest reports on stderr; the whole of it is the message when a case fails, and the server's tail with it.
  expect(result.code, `python3 -m unittest exited ${result.code}:\n${result.output}\nserver:\n${server!.output()}`).toBe(0);
  expect(result.output).toMatch(/Ran 3 tests/);
});
