// Runs test_tokenbell.py, a Python suite of the kind a non-JavaScript app would write, against the reference server
// started as a process with --test-helpers, as such a suite's CI would start it. Under CI a missing /usr/bin/python3
// fails the test; on a workstation it skips, saying why.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/lib/paths.js';
import { freePort, spawnProcess, stopProcess, waitForHttp, type SpawnedProcess } from '../../scripts/lib/processes.js';

const python = '/usr/bin/python3';
const here = fileURLToPath(new URL('.', import.meta.url));
const admin = { username: 'root', pat: 'tbpat-python-example-admin-token-000000000000' };
const clientId = 'python-example-client';

let dir: string | undefined;
let server: SpawnedProcess | undefined;
let baseUrl: string;

beforeAll(async () => {
  if (!existsSync(python)) return;
  dir = await mkdtemp(join(tmpdir(), 'tokenbell-python-example-'));
  const seed = join(dir, 'seed.json');
  await writeFile(
    seed,
    JSON.stringify({
      users: [
        {
          username: admin.username,
          email: 'root@example.com',
          name: 'Administrator',
          password: 'python-example-administrator',
          is_admin: true,
          personal_access_tokens: [{ name: 'python', token: admin.pat, scopes: ['api'] }],
        },
      ],
      applications: [{ name: 'Python Example', owner: admin.username, client_id: clientId, client_secret: 'tbcs_python-example-secret', redirect_uris: ['http://127.0.0.1:8080/callback'], scopes: ['read_user'] }],
    }),
  );
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  server = spawnProcess(
    process.execPath,
    ['--import', 'tsx', join(repoRoot, 'packages/server/src/cli/index.ts'), '--memory', '--seed', seed, '--port', String(port), '--host', '127.0.0.1', '--test-helpers', '--log-level', 'warn'],
    { cwd: repoRoot, env: { NO_COLOR: '1', FORCE_COLOR: '0' }, outputLimit: 20_000 },
  );
  await waitForHttp(`reference server :${port}`, server, `${baseUrl}/.well-known/oauth-authorization-server`, { timeoutMs: 45_000, attemptTimeoutMs: 2_000 });
});

afterAll(async () => {
  if (server) await stopProcess(server.child);
  if (dir) await rm(dir, { recursive: true, force: true });
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
      { cwd: here, timeout: 60_000, env: { ...process.env, TOKENBELL_URL: baseUrl, TOKENBELL_ADMIN_TOKEN: admin.pat, TOKENBELL_CLIENT_ID: clientId } },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, output: `${stdout}${stderr}` }),
    );
  });
  // unittest reports on stderr; the whole of it is the message when a case fails, and the server's tail with it.
  expect(result.code, `python3 -m unittest exited ${result.code}:\n${result.output}\nserver:\n${server!.output()}`).toBe(0);
  expect(result.output).toMatch(/Ran 3 tests/);
});
