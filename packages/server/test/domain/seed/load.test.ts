import { fileStorage } from '../../../src/store/file/storage.js';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { scopes } from '../../../src/openapi/document.js';
import { describe, expect, it } from 'vitest';
import { authenticate, findActivePersonalAccessToken } from '../../../src/domain/accounts.js';
import { authenticateClient } from '../../../src/domain/applications.js';
import { readDurableData } from '../../../src/store/file/store.js';
import { journalFileOf } from '../../../src/store/file/journal.js';
import { ensureDemoData } from '../../../src/domain/seed/demo.js';
import { loadSeed, loadSeedFile } from '../../../src/domain/seed/load.js';
import { SeedError, type SeedFixture } from '../../../src/domain/seed/fixture.js';
import { cheapHashing, hashPassword } from '../../../src/domain/passwords.js';
import { useTempStores } from '../../store/temp-store.js';

const t = useTempStores();
const exampleFile = fileURLToPath(new URL('../../../fixtures/example-seed.json', import.meta.url));
const example = JSON.parse(readFileSync(exampleFile, 'utf8')) as Required<SeedFixture>;

describe('loadSeed with the example fixture', () => {
  it('loads everything, wiring namespaces and members, with no plain secret in the file', async () => {
    const file = t.file();
    const store = await t.open(file);
    const summary = await loadSeedFile(fileStorage(store), exampleFile);
    expect(summary).toEqual({ users: 3, personalAccessTokens: 2, groups: 2, projects: 4, applications: 2, unchanged: 0 });

    const id = (username: string) => store.lookup('users', 'username', username)!.id;
    expect(store.lookup('users', 'username', 'awong')?.two_factor_enabled).toBe(true);
    expect(store.lookup('users', 'username', 'jsmith')?.secondary_emails).toEqual(['js@work.example.com']);
    const acme = store.lookup('groups', 'path', 'acme')!;
    expect(acme).toMatchObject({ visibility: 'private' });
    expect(acme.members).toEqual([
      { user_id: id('jsmith'), access_level: 50 },
      { user_id: id('awong'), access_level: 30 },
    ]);
    expect(store.lookup('groups', 'path', 'opensource')?.visibility).toBe('public');
    expect(store.lookup('projects', 'fullPath', 'acme/widgets')).toMatchObject({ group_id: acme.id, visibility: 'private' });
    expect(store.lookup('projects', 'fullPath', 'acme/website')?.visibility).toBe('internal');
    expect(store.lookup('projects', 'fullPath', 'opensource/bell')?.visibility).toBe('public');
    expect(store.lookup('projects', 'fullPath', 'jsmith/dotfiles')).toMatchObject({ group_id: null, namespace: 'jsmith' });
    const mallory = id('mallory');
    const memberships = [...store.data.groups, ...store.data.projects].flatMap((s) => s.members);
    expect(memberships.some((m) => m.user_id === mallory)).toBe(false);

    // The credentials work...
    expect((await authenticate(fileStorage(store), 'jsmith', 'correct-horse-battery'))?.id).toBe(id('jsmith'));
    const pat = await findActivePersonalAccessToken(fileStorage(store), 'tbpat-jsmith-example-token-000000000000000000');
    expect(pat?.record).toMatchObject({ user_id: id('jsmith'), scopes: ['api'] });
    const appEntry = example.applications[0]!;
    expect(await authenticateClient(fileStorage(store), appEntry.client_id, appEntry.client_secret!)).toMatchObject({
      name: 'Example App',
      owner_id: id('jsmith'),
      // The second is the server's own callback page, which shows the code, on the default port.
      redirect_uris: ['http://127.0.0.1:8080/callback', 'http://127.0.0.1:3000/demo/callback'],
      scopes: ['api', 'read_api', 'read_user'],
    });

    // ...but none of them is in the data file or its journal.
    const text = (await readFile(file, 'utf8')) + (await readFile(journalFileOf(file), 'utf8'));
    const secrets = [
      ...example.users.map((u) => u.password),
      ...example.users.flatMap((u) => (u.personal_access_tokens ?? []).map((p) => p.token)),
      appEntry.client_secret,
    ];
    expect(secrets).toHaveLength(6);
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(await readDurableData(file)).toEqual(JSON.parse(JSON.stringify(store.data)));
  });

  it('loads it again as a no-op: every entry is there and identical, so nothing is written', async () => {
    const file = t.file();
    const store = await t.open(file);
    await loadSeed(fileStorage(store), example);
    const before = JSON.stringify(store.data);
    const writes = store.stats.fileWrites;
    expect(await loadSeed(fileStorage(store), example)).toEqual({ users: 0, personalAccessTokens: 0, groups: 0, projects: 0, applications: 0, unchanged: 11 });
    expect(JSON.stringify(store.data)).toBe(before);
    expect(store.stats.fileWrites).toBe(writes);
  });

  it('keeps what an operator changed since (password, blocked, admin, a revoked token), and adds only the new entries', async () => {
    const store = await t.open(null);
    const storage = fileStorage(store);
    await loadSeed(storage, example);
    const jsmith = store.lookup('users', 'username', 'jsmith')!;
    await store.commit(() => store.update('users', jsmith, { password_hash: 'scrypt$reset', state: 'blocked', is_admin: !jsmith.is_admin }));
    const [pat] = await storage.personalAccessTokens.ofUser(jsmith.id);
    await storage.personalAccessTokens.revokeOwned(jsmith.id, pat!.id);
    const grown = { ...example, users: [...example.users, { username: 'newcomer', email: 'newcomer@example.com', name: 'New', password: 'long-enough-password' }] };
    expect(await loadSeed(storage, grown)).toMatchObject({ users: 1, unchanged: 11 });
    expect(store.lookup('users', 'username', 'jsmith')).toMatchObject({ password_hash: 'scrypt$reset', state: 'blocked', is_admin: !jsmith.is_admin });
    expect((await storage.personalAccessTokens.ofUser(jsmith.id)).find((p) => p.id === pat!.id)?.revoked).toBe(true);
    expect(store.lookup('users', 'username', 'newcomer')).toBeDefined();
  });

  it('refuses an entry that differs from the store\'s by name, one line each, and writes nothing', async () => {
    const store = await t.open(null);
    await loadSeed(fileStorage(store), example);
    const before = JSON.stringify(store.data);
    const [jsmith, awong] = example.users;
    const changed = {
      users: [
        { ...jsmith, email: 'jane@elsewhere.example', name: 'Jane S.' },
        { ...awong, personal_access_tokens: [{ name: 'new', token: 'tbpat-awong-a-token-the-store-has-not-got-00000' }] },
        { username: 'fresh', email: 'fresh@example.com', name: 'Fresh', password: 'long-enough-password' },
      ],
      groups: [{ ...example.groups[0], visibility: 'public' }],
      projects: [{ ...example.projects[0], name: 'Gadgets' }],
      applications: [{ ...example.applications[0], redirect_uris: ['https://other.example/cb'], client_secret: 'tbcs_another-secret-altogether' }],
    };
    const error = (await loadSeed(fileStorage(store), changed).catch((e: unknown) => e)) as SeedError;
    expect(error).toBeInstanceOf(SeedError);
    expect(error.problems).toEqual([
      'users[0]: the user "jsmith" is already in the store with another email, name',
      'users[1].personal_access_tokens[0]: the user "awong" is already in the store without this token',
      `groups[0]: the group "${example.groups[0]!.path}" is already in the store with another visibility`,
      `projects[0]: the project "${example.projects[0]!.namespace}/${example.projects[0]!.path}" is already in the store with another name`,
      `applications[0]: the application "${example.applications[0]!.client_id}" is already in the store with another redirect_uris, client_secret`,
    ]);
    expect(JSON.stringify(store.data)).toBe(before);
  });
});

describe('loadSeed with a bad fixture', () => {
  it('lists every bad entry by its path and writes nothing', async () => {
    const file = t.file();
    const store = await t.open(file);
    const bytes = await readFile(file);
    const writes = store.stats.fileWrites;
    const bad = {
      users: [
        { username: 'ok', email: 'ok@example.com', name: 'OK', password: 'long-enough-password' },
        { username: 'dup', email: 'OK@example.com', name: 'Dup', password: 'long-enough-password' },
        { username: 'bad', email: 'not-an-email', name: 'Bad', password: 'long-enough-password' },
        { username: 'weak', email: 'weak@example.com', name: 'Weak', password: 'short' },
        { username: 'typo', emial: 'typo@example.com', email: 't@example.com', name: 'T', password: 'long-enough-password' },
      ],
      groups: [{ path: 'acme', name: 'Acme', visibility: 'secret', members: [{ username: 'ghost', access_level: 50 }] }],
      projects: [
        { namespace: 'nowhere', path: 'p', name: 'P', visibility: 'private' },
        { namespace: 'ok', path: 'p', name: 'P', visibility: 'private', members: [{ username: 'ok', access_level: 60 }] },
      ],
      applications: [
        { name: 'A', owner: 'ok', client_id: 'id-1', client_secret: 's', redirect_uris: ['https://a.example/cb#x'], scopes: ['api'] },
      ],
    };
    const error = (await loadSeed(fileStorage(store), bad).catch((e: unknown) => e)) as SeedError;
    expect(error).toBeInstanceOf(SeedError);
    expect(error.problems).toEqual([
      'users[1].email: the e-mail address "OK@example.com" is already in use',
      'users[2].email: "not-an-email" is not an e-mail address',
      'users[3].password: the password must be at least 8 characters long',
      'users[4].emial: unknown field; expected one of username, email, secondary_emails, name, password, password_hash, two_factor_enabled, otp_secret, is_admin, bio, personal_access_tokens',
      'groups[0].visibility: must be private, internal or public',
      'projects[0].namespace: "nowhere" is neither a group\'s path nor a username',
      'projects[1].members[0].access_level: must be 10, 20, 30, 40 or 50',
      'applications[0].redirect_uris: "https://a.example/cb#x" must not contain a fragment (#)',
    ]);
    expect(error.message).toContain('users[2].email');
    expect(store.data.users).toEqual([]);
    expect(store.data.sequences.users).toBe(0);
    expect(store.stats.fileWrites).toBe(writes);
    expect((await readFile(file)).equals(bytes)).toBe(true);
  });

  it('names unknown members, owners and non-object fixtures', async () => {
    const store = await t.open(null);
    await expect(loadSeed(fileStorage(store), [])).rejects.toThrow('the fixture must be a JSON object');
    const error = (await loadSeed(fileStorage(store), {
      groups: [{ path: 'g', name: 'G', visibility: 'public', members: [{ username: 'ghost', access_level: 50 }] }],
      applications: [{ name: 'A', owner: 'ghost', client_id: 'c', client_secret: 'tbcs_long-enough-secret', redirect_uris: ['https://a.example/cb'] }],
      extra: true,
    }).catch((e: unknown) => e)) as SeedError;
    expect(error.problems).toEqual([
      'extra: unknown field; expected one of users, groups, projects, applications',
      'groups[0].members[0].username: "ghost" is not a user of the fixture or the store',
      'applications[0].owner: "ghost" is not a user of the fixture or the store',
    ]);
  });
});

describe('loadSeed with secondary e-mail addresses', () => {
  const user = (username: string, email: string, secondary_emails?: unknown) => ({
    username,
    email,
    ...(secondary_emails === undefined ? {} : { secondary_emails }),
    name: username,
    password: 'long-enough-password',
  });

  it('stores them as spelt, in order; a user without any has none', async () => {
    const store = await t.open(null);
    await loadSeed(fileStorage(store), { users: [user('jane', 'jane@example.com', ['Jane@Work.example', 'j@home.example']), user('joe', 'joe@example.com')] });
    expect(store.lookup('users', 'username', 'jane')?.secondary_emails).toEqual(['Jane@Work.example', 'j@home.example']);
    expect(store.lookup('users', 'username', 'joe')?.secondary_emails).toEqual([]);
  });

  it('refuses an address another user of the fixture has, primary or secondary, whatever the case; one listed twice, the primary again, and a malformed one', async () => {
    const store = await t.open(null);
    const error = (await loadSeed(fileStorage(store), {
      users: [
        user('a', 'a@example.com', ['shared@example.com']),
        user('b', 'SHARED@example.com'),
        user('c', 'c@example.com', ['c2@example.com', 'A@example.com']),
        user('d', 'd@example.com', ['x@example.com', 'X@example.com']),
        user('e', 'e@example.com', ['E@Example.com']),
        user('f', 'f@example.com', ['not-an-email']),
        user('g', 'g@example.com', 'g2@example.com'),
      ],
    }).catch((e: unknown) => e)) as SeedError;
    expect(error).toBeInstanceOf(SeedError);
    expect(error.problems).toEqual([
      'users[1].email: the e-mail address "SHARED@example.com" is already in use',
      'users[2].secondary_emails[1]: the e-mail address "A@example.com" is already in use',
      'users[3].secondary_emails[1]: the e-mail address "X@example.com" is listed twice',
      'users[4].secondary_emails[0]: the e-mail address "E@Example.com" is already the user\'s primary one',
      'users[5].secondary_emails[0]: "not-an-email" is not an e-mail address',
      'users[6].secondary_emails: must be an array',
    ]);
    expect(store.data.users).toEqual([]);
  });

  it("refuses an address a user in the store has, primary or secondary, and writes nothing", async () => {
    const store = await t.open(null);
    await loadSeed(fileStorage(store), { users: [user('jane', 'jane@example.com', ['jane@work.example'])] });
    const before = JSON.stringify(store.data);
    const error = (await loadSeed(fileStorage(store), {
      users: [user('joe', 'JANE@WORK.example'), user('jim', 'jim@example.com', ['Jane@Example.com'])],
    }).catch((e: unknown) => e)) as SeedError;
    expect(error.problems).toEqual([
      'users[0].email: the e-mail address "JANE@WORK.example" is already in use',
      'users[1].secondary_emails[0]: the e-mail address "Jane@Example.com" is already in use',
    ]);
    expect(JSON.stringify(store.data)).toBe(before);
  });
});

describe('loadSeed with a password_hash instead of a password', () => {
  const hashed = (username: string, password_hash: unknown) => ({ username, email: `${username}@example.com`, name: username, password_hash });

  it('keeps the hash as given, which signs in; loaded again, even once rehashed at sign-in, it is skipped as identical', async () => {
    const file = t.file();
    const store = await t.open(file);
    const storage = fileStorage(store);
    const given = await hashPassword('correct-horse-battery', cheapHashing);
    const fixture = { users: [hashed('jane', given)] };
    expect(await loadSeed(storage, fixture)).toMatchObject({ users: 1, unchanged: 0 });
    expect(store.lookup('users', 'username', 'jane')?.password_hash).toBe(given);

    const writes = store.stats.fileWrites;
    expect(await loadSeed(storage, fixture)).toMatchObject({ users: 0, unchanged: 1 });
    expect(store.stats.fileWrites).toBe(writes);

    expect(await authenticate(storage, 'jane', 'correct-horse-battery')).not.toBeNull();
    const rehashed = store.lookup('users', 'username', 'jane')!.password_hash;
    expect(rehashed).toMatch(/^scrypt\$16384\$/);
    // The store's hash is the store's, as after a reset-password: the next start neither refuses nor rewinds it.
    expect(await loadSeed(storage, fixture)).toMatchObject({ users: 0, unchanged: 1 });
    expect(store.lookup('users', 'username', 'jane')?.password_hash).toBe(rehashed);
  });

  it('refuses, one line each and writing nothing, a malformed or out-of-bounds hash, both a password and a hash, and neither', async () => {
    const store = await t.open(null);
    const salt = 'AAAAAAAAAAAAAAAAAAAAAA==';
    const key = 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
    const error = (await loadSeed(fileStorage(store), {
      users: [
        hashed('plain', 'correct-horse-battery'),
        hashed('huge', `scrypt$1073741824$8$1$${salt}$${key}`),
        hashed('odd', `scrypt$1000$8$1$${salt}$${key}`),
        hashed('number', 42),
        { ...hashed('both', `scrypt$1024$8$1$${salt}$${key}`), password: 'correct-horse-battery' },
        { username: 'neither', email: 'neither@example.com', name: 'Neither' },
      ],
    }).catch((e: unknown) => e)) as SeedError;
    expect(error).toBeInstanceOf(SeedError);
    const malformed =
      'must be a hash as tokenbell hash-password prints it: scrypt$N$r$p$salt$hash, N a power of two up to 2^20, r 1 to 32, p 1 to 16, salt and hash in base64 (the hash 16 to 64 bytes)';
    expect(error.problems).toEqual([
      `users[0].password_hash: ${malformed}`,
      `users[1].password_hash: ${malformed}`,
      `users[2].password_hash: ${malformed}`,
      `users[3].password_hash: ${malformed}`,
      'users[4].password_hash: give password or password_hash, not both',
      'users[5].password: must be a string (or give password_hash instead)',
    ]);
    for (const problem of error.problems) expect(problem).not.toContain('\n');
    expect(store.data.users).toEqual([]);
  });

  it('hashes plain passwords with the parameters asked for (a test instance\'s cheap ones), which still sign in', async () => {
    const store = await t.open(null);
    await loadSeed(fileStorage(store), { users: [{ username: 'jane', email: 'jane@example.com', name: 'Jane', password: 'correct-horse-battery' }] }, { hashing: cheapHashing });
    expect(store.lookup('users', 'username', 'jane')?.password_hash).toMatch(/^scrypt\$1024\$8\$1\$/);
    expect(await authenticate(fileStorage(store), 'jane', 'correct-horse-battery')).not.toBeNull();
  });
});

describe('ensureDemoData', () => {
  it('seeds an empty store once and answers the credentials', async () => {
    const file = t.file();
    const store = await t.open(file);
    const demo = await ensureDemoData(fileStorage(store), 'http://127.0.0.1:3000');
    expect(demo).not.toBeNull();
    expect(demo!.username).toBe('demo');
    expect(demo!.password).toHaveLength(16);
    expect(demo!.client_secret.startsWith('tbcs_')).toBe(true);
    expect(demo!.redirect_uri).toBe('http://127.0.0.1:3000/demo/callback');

    expect(store.lookup('users', 'username', 'demo')?.email).toBe('demo@example.com');
    // The server's own demo account: production's parameters, never a test instance's.
    expect(store.lookup('users', 'username', 'demo')?.password_hash).toMatch(/^scrypt\$16384\$8\$1\$/);
    const group = store.lookup('groups', 'path', 'demo-group')!;
    expect(group.visibility).toBe('private');
    expect(group.members).toEqual([{ user_id: store.lookup('users', 'username', 'demo')!.id, access_level: 50 }]);
    expect(store.lookup('projects', 'fullPath', 'demo-group/demo-project')).toMatchObject({
      group_id: group.id,
      visibility: 'private',
    });
    expect(await authenticateClient(fileStorage(store), demo!.client_id, demo!.client_secret)).toMatchObject({
      name: 'Demo App',
      redirect_uris: ['http://127.0.0.1:3000/demo/callback'],
      // The whole catalogue, so that a client asking for any of the service's scopes signs in on a fresh instance.
      scopes: [...scopes],
    });
    expect(await authenticate(fileStorage(store), 'demo', demo!.password)).not.toBeNull();
    const text = await readFile(file, 'utf8');
    expect(text).not.toContain(demo!.password);
    expect(text).not.toContain(demo!.client_secret);

    expect(await ensureDemoData(fileStorage(store), 'http://127.0.0.1:3000')).toBeNull();
    expect(store.data.users).toHaveLength(1);
  });
});
