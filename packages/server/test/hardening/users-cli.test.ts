// `tokenbell users ...` on a real data file: create a user, give them a personal access token, reset their password;
// a server started on the file then knows them. While a server runs on the file the command is refused by its lock.
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { spawnProcess } from '../../../../scripts/lib/processes.js';
import { cliPath, repoRoot, startCli, stopCli, tempDir } from './support.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

/** `tokenbell users ...` as an operator types it. */
async function users(args: string[]): Promise<{ code: number | null; output: string }> {
  const cli = spawnProcess(process.execPath, ['--import', 'tsx', cliPath, 'users', ...args], { cwd: repoRoot, env: { NODE_ENV: 'production' } });
  const { code } = await cli.exited;
  return { code, output: cli.output() };
}

it('creates a user and a token that a server on the same file then accepts, and resets the password', async () => {
  const data = join(dir.path, 'users.json');
  const created = await users(['create', '--data', data, '--username', 'ops', '--email', 'ops@example.com', '--name', 'Ops Person', '--password', 'a long first password']);
  expect(created).toMatchObject({ code: 0, output: expect.stringMatching(/^created user ops \(id 1\)/) });
  const token = await users(['token', '--data', data, '--username', 'ops', '--name', 'ci', '--scopes', 'read_user']);
  expect(token.code).toBe(0);
  const pat = token.output.trim().split('\n').at(-1)!;
  expect(pat.length).toBeGreaterThanOrEqual(20);

  const refusal = await users(['create', '--data', data, '--username', 'ops', '--email', 'other@example.com', '--name', 'Again', '--password', 'another long password']);
  expect(refusal.code).toBe(1);
  expect(refusal.output).toMatch(/the username "ops" is already taken/);
  expect(refusal.output).not.toMatch(/\n\s+at /);

  const server = await startCli(['--data', data]);
  try {
    const me = await fetch(`${server.baseUrl}/api/v3/user`, { headers: { 'private-token': pat } });
    expect(await me.json()).toMatchObject({ username: 'ops', name: 'Ops Person' });
    // One writer per file: the command names the running server instead of writing behind its back.
    const busy = await users(['reset-password', '--data', data, '--username', 'ops', '--password', 'a long second password']);
    expect(busy.code).toBe(1);
    expect(busy.output).toMatch(/is in use by process \d+/);
  } finally {
    await stopCli(server, 'SIGTERM');
  }

  expect((await users(['reset-password', '--data', data, '--username', 'ops@example.com', '--password', 'a long second password'])).code).toBe(0);
  const again = await startCli(['--data', data]);
  try {
    const grant = (password: string) =>
      fetch(`${again.baseUrl}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'password', username: 'ops', password }) });
    expect((await grant('a long first password')).status).toBe(400);
    expect((await grant('a long second password')).status).toBe(200);
  } finally {
    await stopCli(again, 'SIGTERM');
  }
});

it('explains itself, and names a missing flag or an unknown command in one line', async () => {
  expect((await users(['--help'])).output).toContain('tokenbell users <command>');
  const missing = await users(['create', '--data', join(dir.path, 'x.json'), '--username', 'x']);
  expect(missing).toMatchObject({ code: 1, output: expect.stringContaining('users create needs --email') });
  const unknown = await users(['delete-everything']);
  expect(unknown).toMatchObject({ code: 1, output: expect.stringContaining('unknown users command "delete-everything"') });
});
