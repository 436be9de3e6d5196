// A password hash made with parameters below production's (a seed's password_hash from a test instance, or an older
// server's) still signs in, and the first sign-in with it, by the password grant or the sign-in form, replaces it
// with the production parameters in the store; the next sign-in checks the new hash. On the project's store (the file
// store in memory, or PostgreSQL in the `postgres` project), and on a data file read back from the disk.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cheapHashing, hashPassword } from '../../src/domain/passwords.js';
import { readDurableData } from '../../src/store/file/store.js';
import { Agent, signIn } from '../support/agent.js';
import { form, startTestServer, testStoreKind, type TestServer } from '../support/server.js';

const password = 'correct-horse-battery';
const parametersOf = (stored: string | undefined) => stored?.split('$').slice(0, 4).join('$');

/** A seed of users whose password_hash is `password` hashed with the cheap parameters, as startTokenbell's are. */
async function cheapSeed(...usernames: string[]) {
  const users = await Promise.all(
    usernames.map(async (username) => ({ username, email: `${username}@example.com`, name: username, password_hash: await hashPassword(password, cheapHashing) })),
  );
  return { users };
}

const passwordGrant = (server: TestServer, username: string, pw = password) =>
  fetch(`${server.baseUrl}/oauth/token`, form({ grant_type: 'password', username, password: pw }));

describe(`a cheap password hash, on ${testStoreKind() === 'postgres' ? 'PostgreSQL' : 'the file store in memory'}`, () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ seed: await cheapSeed('granted', 'paged', 'wrong') });
  });
  afterAll(() => server?.close());
  const storedHash = async (username: string) => (await server.storage.users.byUsername(username))?.password_hash;

  it('is rehashed with the production parameters at a password grant, and the new hash signs in next', async () => {
    const seeded = await storedHash('granted');
    expect(parametersOf(seeded)).toBe('scrypt$1024$8$1');
    expect((await passwordGrant(server, 'granted')).status).toBe(200);
    const rehashed = await storedHash('granted');
    expect(parametersOf(rehashed)).toBe('scrypt$16384$8$1');
    expect((await passwordGrant(server, 'granted')).status).toBe(200);
    expect(await storedHash('granted')).toBe(rehashed);
    expect((await passwordGrant(server, 'granted', 'not-the-password')).status).toBe(400);
  });

  it('is rehashed at a sign-in on the pages', async () => {
    const agent = new Agent(server.baseUrl);
    const response = await signIn(agent, 'paged', password);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).not.toMatch(/sign_in/);
    expect(parametersOf(await storedHash('paged'))).toBe('scrypt$16384$8$1');
  });

  it('is kept by a wrong password', async () => {
    const seeded = await storedHash('wrong');
    expect((await passwordGrant(server, 'wrong', 'not-the-password')).status).toBe(400);
    expect(await storedHash('wrong')).toBe(seeded);
  });
});

describe.skipIf(testStoreKind() === 'postgres')('a cheap password hash on a data file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tokenbell-rehash-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('is rehashed at a password grant, and the file says so after the server stops', async () => {
    const file = join(dir, 'data.json');
    const server = await startTestServer({ file, seed: await cheapSeed('jane') });
    try {
      expect((await passwordGrant(server, 'jane')).status).toBe(200);
    } finally {
      await server.close();
    }
    const jane = (await readDurableData(file)).users.find((u) => u.username === 'jane');
    expect(parametersOf(jane?.password_hash)).toBe('scrypt$16384$8$1');
  });
});
