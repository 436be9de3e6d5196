// `tokenbell users list | block | unblock | set-admin | two-factor | delete` and `token --expires` in the past, as an
// operator runs them, and what a server on the same store then does: over real HTTP, as users-cli.test.ts. On the data
// file the server is stopped while a command runs (the file's lock); on PostgreSQL it keeps running beside it.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Agent, signIn } from '../support/agent.js';
import { cliStore, startCli, stopCli, tempDir, usersCommand as users, type CliProcess } from './support.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

const passwords = { alice: 'alice has a long password', bob: 'bob has a long password' };
const bobsToken = 'tbpat-bob-fixture-token-0000000000000000000000';
const seed = {
  users: [
    { username: 'alice', email: 'alice@example.com', name: 'Alice', password: passwords.alice },
    { username: 'bob', email: 'bob@example.com', name: 'Bob', password: passwords.bob, personal_access_tokens: [{ name: 'ci', token: bobsToken, scopes: ['read_user'] }] },
  ],
  groups: [{ path: 'crew', name: 'Crew', visibility: 'private', members: [{ username: 'alice', access_level: 50 }, { username: 'bob', access_level: 30 }] }],
};

const grant = (server: CliProcess, username: 'alice' | 'bob') =>
  fetch(`${server.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', username, password: passwords[username] }),
  });
const me = (server: CliProcess, headers: Record<string, string>) => fetch(`${server.baseUrl}/api/v3/user`, { headers });
const noStack = (output: string) => expect(output).not.toMatch(/\n\s+at /);

/** A store seeded with `seed` and a server on it; `commands` runs the operator's commands where they may run. */
async function withSeededServer(name: string, test: (where: string[], server: () => CliProcess, commands: (run: () => Promise<void>) => Promise<void>) => Promise<void>) {
  const seedFile = join(dir.path, `${name}-seed.json`);
  await writeFile(seedFile, JSON.stringify(seed));
  const store = await cliStore(['--data', join(dir.path, `${name}.json`)]);
  let server = await startCli([...store.args, '--seed', seedFile]);
  try {
    await test(store.args, () => server, async (run) => {
      if (store.kind === 'postgres') return run();
      await stopCli(server, 'SIGTERM');
      await run();
      server = await startCli(store.args);
    });
  } finally {
    await stopCli(server, 'SIGTERM');
    await store.drop();
  }
}

// Many processes in a row, each loading the CLI through tsx, and the server restarted on the file store.
it('blocks and unblocks, makes an administrator, turns two-factor on and off, and lists users without secrets', { timeout: 180_000 }, async () => {
  await withSeededServer('admin', async (where, server, commands) => {
    const alices = (await (await grant(server(), 'alice')).json()) as { access_token: string };
    expect((await me(server(), { 'private-token': bobsToken })).status).toBe(200);
    const bobsAccess = ((await (await grant(server(), 'bob')).json()) as { access_token: string }).access_token;
    expect((await me(server(), { authorization: `Bearer ${bobsAccess}` })).status).toBe(200);

    let secret = '';
    await commands(async () => {
      expect(await users(['block', ...where, '--username', 'bob'])).toMatchObject({ code: 0, output: expect.stringContaining('bob is blocked') });
      expect(await users(['set-admin', ...where, '--username', 'alice'])).toMatchObject({ code: 0, output: expect.stringContaining('alice is now an administrator') });
      const on = await users(['two-factor', ...where, '--username', 'alice', '--on']);
      expect(on.code).toBe(0);
      const [uri, printed] = on.output.trim().split('\n').slice(-2) as [string, string];
      expect(uri).toMatch(/^otpauth:\/\/totp\/tokenbell:alice\?/);
      secret = new URL(uri).searchParams.get('secret')!;
      expect(printed).toBe(secret);
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);

      const list = await users(['list', ...where]);
      expect(list.code).toBe(0);
      expect(list.output.trim().split('\n')).toEqual([
        ['1', 'alice', 'alice@example.com', 'active', 'admin', 'two-factor'].join('\t'),
        ['2', 'bob', 'bob@example.com', 'blocked', '-', '-'].join('\t'),
      ]);
      const json = await users(['list', '--json', ...where]);
      expect(JSON.parse(json.output)).toEqual([
        expect.objectContaining({ id: 1, username: 'alice', state: 'active', is_admin: true, two_factor_enabled: true }),
        expect.objectContaining({ id: 2, username: 'bob', state: 'blocked', is_admin: false, two_factor_enabled: false }),
      ]);
      for (const output of [list.output, json.output]) {
        expect(output).not.toMatch(/scrypt|password|otp_secret/);
        expect(output).not.toContain(secret);
      }
    });

    // Blocked: no sign-in (the password grant and the pages), and neither token they hold works.
    expect((await grant(server(), 'bob')).status).toBe(400);
    expect((await signIn(new Agent(server().baseUrl), 'bob', passwords.bob)).status).not.toBe(302);
    expect((await me(server(), { 'private-token': bobsToken })).status).toBe(401);
    expect((await me(server(), { authorization: `Bearer ${bobsAccess}` })).status).toBe(401);
    // An administrator now; with two-factor, the password grant is refused to her (spec 5.4).
    expect(await (await me(server(), { authorization: `Bearer ${alices.access_token}` })).json()).toMatchObject({ is_admin: true, two_factor_enabled: true });
    expect((await grant(server(), 'alice')).status).toBe(400);

    await commands(async () => {
      expect(await users(['unblock', ...where, '--username', 'bob'])).toMatchObject({ code: 0, output: expect.stringContaining('bob is active') });
      expect(await users(['set-admin', ...where, '--username', 'alice', '--off'])).toMatchObject({ code: 0, output: expect.stringContaining('alice is no longer an administrator') });
      expect(await users(['two-factor', ...where, '--username', 'alice', '--off'])).toMatchObject({ code: 0, output: expect.stringContaining('two-factor authentication is off for alice') });
      const neither = await users(['two-factor', ...where, '--username', 'alice']);
      expect(neither).toMatchObject({ code: 1, output: expect.stringContaining('users two-factor needs --on or --off') });
      noStack(neither.output);
    });

    expect((await me(server(), { 'private-token': bobsToken })).status).toBe(200);
    expect((await grant(server(), 'bob')).status).toBe(200);
    expect(await (await me(server(), { authorization: `Bearer ${alices.access_token}` })).json()).toMatchObject({ is_admin: false, two_factor_enabled: false });
    expect((await grant(server(), 'alice')).status).toBe(200);
  });
});

it("deletes a user with everything theirs, but not a group's only owner; refuses a token whose last day has passed", { timeout: 180_000 }, async () => {
  await withSeededServer('delete', async (where, server, commands) => {
    await commands(async () => {
      const sole = await users(['delete', ...where, '--username', 'alice']);
      expect(sole).toMatchObject({ code: 1, output: expect.stringContaining('alice is the only owner of the group "crew"') });
      noStack(sole.output);

      const past = await users(['token', ...where, '--username', 'alice', '--name', 'old', '--expires', '2000-01-01']);
      expect(past).toMatchObject({ code: 1, output: expect.stringContaining('the last valid day 2000-01-01 has already passed') });
      noStack(past.output);
      // The token's last day is today: it works until the end of it (UTC).
      const today = new Date().toISOString().slice(0, 10);
      const fresh = await users(['token', ...where, '--username', 'alice', '--name', 'today', '--expires', today]);
      expect(fresh.code).toBe(0);

      expect(await users(['delete', ...where, '--username', 'bob'])).toMatchObject({ code: 0, output: expect.stringContaining('deleted user bob (id 2)') });
      expect((await users(['list', ...where])).output.trim().split('\n')).toEqual([['1', 'alice', 'alice@example.com', 'active', '-', '-'].join('\t')]);
      const again = await users(['delete', ...where, '--username', 'bob']);
      expect(again).toMatchObject({ code: 1, output: expect.stringContaining('there is no user "bob"') });
    });
    expect((await me(server(), { 'private-token': bobsToken })).status).toBe(401);
    expect((await grant(server(), 'bob')).status).toBe(400);
    expect((await grant(server(), 'alice')).status).toBe(200);
  });
});
