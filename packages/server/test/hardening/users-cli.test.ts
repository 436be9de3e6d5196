// `tokenbell users ...` on a real data file: create a user, give them a personal access token, reset their password;
// a server started on the file then knows them. While a server runs on the file the command is refused by its lock.
// In the `postgres` test project the same on a database, where the command works beside a running server instead.
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cliStore, startCli, stopCli, tempDir, usersCommand as users, type CliProcess } from './support.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

const grant = (server: CliProcess, password: string) =>
  fetch(`${server.baseUrl}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'password', username: 'ops', password }) });

// Six processes in a row, each loading the CLI through tsx: 15-20 s on a quiet two-core machine, so the default 30 s
// leaves too little room on a busy one.
it('creates a user and a token that a server on the same store then accepts, and resets the password', { timeout: 90_000 }, async () => {
  const store = await cliStore(['--data', join(dir.path, 'users.json')]);
  try {
    await usersOn(store);
  } finally {
    await store.drop();
  }
});

async function usersOn({ kind, args: where }: Awaited<ReturnType<typeof cliStore>>): Promise<void> {
  const created = await users(['create', ...where, '--username', 'ops', '--email', 'ops@example.com', '--name', 'Ops Person'], { TOKENBELL_PASSWORD: 'a long first password' });
  expect(created).toMatchObject({ code: 0, output: expect.stringMatching(/^created user ops \(id 1\)/) });
  const token = await users(['token', ...where, '--username', 'ops', '--name', 'ci', '--scopes', 'read_user']);
  expect(token.code).toBe(0);
  const pat = token.output.trim().split('\n').at(-1)!;
  expect(pat.length).toBeGreaterThanOrEqual(20);

  const refusal = await users(['create', ...where, '--username', 'ops', '--email', 'other@example.com', '--name', 'Again'], { TOKENBELL_PASSWORD: 'another long password' });
  expect(refusal.code).toBe(1);
  expect(refusal.output).toMatch(/the username "ops" is already taken/);
  expect(refusal.output).not.toMatch(/\n\s+at /);

  const server = await startCli(where);
  try {
    const me = await fetch(`${server.baseUrl}/api/v3/user`, { headers: { 'private-token': pat } });
    expect(await me.json()).toMatchObject({ username: 'ops', name: 'Ops Person' });
    if (kind === 'file') {
      // One writer per file: the command names the running server instead of writing behind its back.
      const busy = await users(['reset-password', ...where, '--username', 'ops'], { TOKENBELL_PASSWORD: 'a long second password' });
      expect(busy.code).toBe(1);
      expect(busy.output).toMatch(/is in use by process \d+/);
    } else {
      // A database has many writers: the command works beside the running server, which sees the change at once.
      const reset = await users(['reset-password', ...where, '--username', 'ops'], { TOKENBELL_PASSWORD: 'a long interim password' });
      expect(reset.code).toBe(0);
      expect((await grant(server, 'a long first password')).status).toBe(400);
      expect((await grant(server, 'a long interim password')).status).toBe(200);
    }
  } finally {
    await stopCli(server, 'SIGTERM');
  }

  expect((await users(['reset-password', ...where, '--username', 'ops@example.com'], { TOKENBELL_PASSWORD: 'a long second password' })).code).toBe(0);
  const again = await startCli(where);
  try {
    expect((await grant(again, 'a long first password')).status).toBe(400);
    expect((await grant(again, 'a long interim password')).status).toBe(400);
    expect((await grant(again, 'a long second password')).status).toBe(200);
  } finally {
    await stopCli(again, 'SIGTERM');
  }
}

it('explains itself, and names a missing flag or an unknown command in one line', async () => {
  expect((await users(['--help'])).output).toContain('tokenbell users <command>');
  const missing = await users(['create', '--data', join(dir.path, 'x.json'), '--username', 'x']);
  expect(missing).toMatchObject({ code: 1, output: expect.stringContaining('users create needs --email') });
  const unknown = await users(['delete-everything']);
  expect(unknown).toMatchObject({ code: 1, output: expect.stringContaining('unknown users command "delete-everything"') });
});
