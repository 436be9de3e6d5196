// A container restarted with the same --seed: the server starts again on the store it seeded (identical entries are
// skipped, a user given by a password_hash as well), keeps a password an operator reset meanwhile, and refuses a
// changed seed by naming each conflicting entry, in one line each and without a stack. On the data file, and in the
// `postgres` project on a database.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cheapHashing, hashPassword } from '../../src/domain/passwords.js';
import { cliStore, freePort, runCli, startCli, stopCli, tempDir, usersCommand, type CliProcess } from './support.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

const alice = { username: 'alice', email: 'alice@example.com', name: 'Alice', password: 'the seed gives this password' };
const application = {
  name: 'Crew App',
  owner: 'alice',
  client_id: 'crew-app',
  client_secret: 'tbcs_crew-app-secret-from-the-seed',
  redirect_uris: ['http://127.0.0.1:8080/callback'],
  scopes: ['read_user'],
};
// A seed's password_hash, with a test instance's cheap parameters: rehashed at bob's first sign-in.
const bob = { username: 'bob', email: 'bob@example.com', name: 'Bob', password_hash: await hashPassword('bob brought his own hash', cheapHashing) };
const seed = { users: [alice, bob], groups: [{ path: 'crew', name: 'Crew', visibility: 'private', members: [{ username: 'alice', access_level: 50 }] }], applications: [application] };

const grant = (server: CliProcess, password: string, username = 'alice') =>
  fetch(`${server.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', username, password }),
  });

it('starts again with the same seed, and refuses a seed whose entries conflict with the store, by name', { timeout: 120_000 }, async () => {
  const seedFile = join(dir.path, 'seed.json');
  await writeFile(seedFile, JSON.stringify(seed));
  const store = await cliStore(['--data', join(dir.path, 'data.json')]);
  const withSeed = [...store.args, '--seed', seedFile];
  try {
    await stopCli(await startCli(withSeed), 'SIGTERM');
    // An operator's reset since seeding is kept: the password is the store's, not the fixture's.
    expect((await usersCommand(['reset-password', ...store.args, '--username', 'alice'], { TOKENBELL_PASSWORD: 'the operator reset it' })).code).toBe(0);

    const again = await startCli(withSeed);
    try {
      expect(again.output()).toContain(`loaded seed ${seedFile}`);
      expect((await grant(again, 'the operator reset it')).status).toBe(200);
      expect((await grant(again, alice.password)).status).toBe(400);
      // Before and after its rehash.
      expect((await grant(again, 'bob brought his own hash', 'bob')).status).toBe(200);
      expect((await grant(again, 'bob brought his own hash', 'bob')).status).toBe(200);
    } finally {
      await stopCli(again, 'SIGTERM');
    }

    await writeFile(
      seedFile,
      JSON.stringify({ ...seed, users: [{ ...alice, email: 'alice@elsewhere.example' }], applications: [{ ...application, redirect_uris: ['https://other.example/callback'] }] }),
    );
    const refused = runCli(withSeed, await freePort());
    const { code } = await refused.exited;
    expect(code).toBe(1);
    const output = refused.output();
    expect(output).toContain(`${seedFile}: users[0]: the user "alice" is already in the store with another email\n`);
    expect(output).toContain(`${seedFile}: applications[0]: the application "crew-app" is already in the store with another redirect_uris\n`);
    expect(output).not.toContain('groups[0]');
    expect(output).not.toMatch(/\n\s+at /);
  } finally {
    await store.drop();
  }
});

it('starts again with a seed whose App ID, username, e-mail and paths mix case (issue 41: an App ID is compared exactly)', { timeout: 120_000 }, async () => {
  const carol = { username: 'Carol', email: 'Carol@Example.com', name: 'Carol', password: 'carol has a password too', personal_access_tokens: [{ name: 'ci', token: 'tbpat-Carol-MixedCase-token-0000000000', scopes: ['api'] }] };
  const mixed = {
    users: [carol],
    groups: [{ path: 'MixedCase', name: 'Mixed Case', visibility: 'private', members: [{ username: 'carol', access_level: 50 }] }],
    projects: [{ namespace: 'mixedcase', path: 'Tools', name: 'Tools', visibility: 'private' }],
    applications: [{ ...application, owner: 'CAROL', client_id: 'r3a-A7fSfyuTzbnKKV84WDtuzg' }],
  };
  const seedFile = join(dir.path, 'mixed-seed.json');
  await writeFile(seedFile, JSON.stringify(mixed));
  const store = await cliStore(['--data', join(dir.path, 'mixed.json')]);
  const withSeed = [...store.args, '--seed', seedFile];
  try {
    await stopCli(await startCli(withSeed), 'SIGTERM');
    // The second start failed before: "uid: the App ID ... is already taken".
    const again = await startCli(withSeed);
    try {
      expect(again.output()).toContain(`loaded seed ${seedFile}`);
      const token = await fetch(`${again.baseUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'password', username: 'carol', password: carol.password, client_id: 'r3a-A7fSfyuTzbnKKV84WDtuzg', client_secret: application.client_secret }),
      });
      expect(token.status).toBe(200);
      // An App ID is exact: another case is another (unknown) application.
      const other = await fetch(`${again.baseUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'password', username: 'carol', password: carol.password, client_id: 'r3a-a7fsfyutzbnkkv84wdtuzg', client_secret: application.client_secret }),
      });
      expect(other.status).toBe(401);
    } finally {
      await stopCli(again, 'SIGTERM');
    }
  } finally {
    await store.drop();
  }
});
