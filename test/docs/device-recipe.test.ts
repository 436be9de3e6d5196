// The device flow's shell recipe in docs/oidc-and-device-flow.md, run as a CLI author would run it (bash, curl, jq)
// against a real tokenbell: it prints the access token once the user approves, and stops at once with the error when
// the first answer is not 200, rather than polling with a device code it never got.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTokenbell, type RunningTokenbell } from '../../packages/server/src/testing.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/lib/paths.js';

const run = promisify(execFile);

let tokenbell: RunningTokenbell;
let recipe: string;
beforeAll(async () => {
  for (const tool of ['curl', 'jq']) {
    await run('sh', ['-c', `command -v ${tool}`]).catch(() => {
      throw new Error(`the device flow recipe needs ${tool}; install it (apt-get install ${tool})`);
    });
  }
  const guide = await readFile(join(repoRoot, 'docs/oidc-and-device-flow.md'), 'utf8');
  const from = guide.indexOf('With curl and jq');
  recipe = /```sh\n([\s\S]*?)```/.exec(guide.slice(from))![1]!;
  tokenbell = await startTokenbell({
    seed: {
      users: [{ username: 'alice', email: 'alice@example.com', name: 'Alice', password: 'alice-password-long' }],
      applications: [{ name: 'Recipe CLI', owner: 'alice', client_id: 'recipe-cli', redirect_uris: ['http://127.0.0.1/unused'], scopes: ['read_user'], confidential: false }],
    },
  });
});
afterAll(() => tokenbell?.close());

const recipeWith = (clientId: string) =>
  run('bash', ['-c', recipe], { env: { ...process.env, BASE: tokenbell.url, CLIENT_ID: clientId }, timeout: 30_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout: string; stderr: string }) => ({ code: error.code ?? -1, stdout: error.stdout, stderr: error.stderr }),
  );

it('prints the access token once the user approves', { timeout: 40_000 }, async () => {
  await tokenbell.helpers.setAutoApproval('alice');
  const { code, stdout } = await recipeWith('recipe-cli');
  expect(code).toBe(0);
  const token = stdout.trim().split('\n').at(-1)!;
  const me = await fetch(`${tokenbell.url}/api/v4/user`, { headers: { authorization: `Bearer ${token}` } });
  expect(await me.json()).toMatchObject({ username: 'alice' });
});

it('stops with the error when the first answer is not 200', async () => {
  const started = Date.now();
  const { code, stdout, stderr } = await recipeWith('no-such-client');
  expect(code).toBe(1);
  expect(JSON.parse(stderr)).toMatchObject({ error: 'invalid_client' });
  expect(stdout).toBe('');
  expect(Date.now() - started).toBeLessThan(5_000);
});
