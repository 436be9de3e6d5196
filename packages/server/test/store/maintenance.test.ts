// The maintenance port (domain/storage/maintenance.ts) on every backend (backends.ts): names already taken, seeding,
// the instance's secrets, pruning, readiness and closing; and what the test kit asks of storage (issue 19), a snapshot
// of the whole state that a restore brings back, on the stores that live in one instance (the file store in memory
// and on disk; PostgreSQL, shared by every instance on the database, refuses).
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { noEvents } from '../../src/domain/notification-levels.js';
import { digest } from '../../src/domain/secrets.js';
import { loadSeedFile } from '../../src/domain/seed/load.js';
import type { SeedRows, Storage, StoreSnapshot } from '../../src/domain/storage/index.js';
import { exampleAccounts, exampleApplication } from '../support/example-seed.js';
import {
  created,
  day,
  everyBackend,
  fileStores,
  inMemory,
  newApplication,
  newGroup,
  newPair,
  newProject,
  newToken,
  newUser,
  now,
  onDisk,
  onPostgres,
  postgresStorageOn,
  refusal,
  useBackends,
  withoutMembers,
  type StoreData,
} from './backends.js';

const { open } = useBackends();

describe.each(everyBackend)('maintenance on %s', (name) => {
  it('finds which names it has, whatever their case (App IDs and digests exactly), mapped to their stored spelling', async () => {
    const { storages: [storage] } = await open(name);
    const user = await storage.users.create(newUser('JSmith', { email: 'Jane@Example.com', secondary_emails: ['Jane@Work.example'] }));
    await storage.namespaces.createGroup(newGroup('Acme'), []);
    await storage.namespaces.createProject(newProject('acme', 'Widgets'), []);
    await storage.applications.create(newApplication(user.id, 'App-One'));
    await storage.personalAccessTokens.create(newToken(user.id, 'digest-1'));
    expect(
      await storage.maintenance.existingNames({
        usernames: ['jsmith', 'nobody'],
        emails: ['JANE@example.com', 'jsmith@example.com', 'jane@WORK.example'],
        groupPaths: ['ACME', 'jsmith'],
        projectPaths: ['acme/WIDGETS', 'acme/gadgets', 'Widgets'],
        clientIds: ['App-One', 'app-one'],
        tokenDigests: ['digest-1', 'DIGEST-1'],
      }),
    ).toEqual({
      usernames: new Map([['jsmith', 'JSmith']]),
      emails: new Map([
        ['jane@example.com', 'Jane@Example.com'],
        ['jane@work.example', 'Jane@Work.example'],
      ]),
      groupPaths: new Map([['acme', 'Acme']]),
      projectPaths: new Map([['acme/widgets', 'Acme/Widgets']]),
      // Keyed as nameKeys keys them: an App ID as it is (the seed looks it up so; lower-cased, a restart with
      // 'App-One' found nothing and was refused as taken).
      clientIds: new Map([['App-One', 'App-One']]),
      tokenDigests: new Map([['digest-1', 'digest-1']]),
    });
    const nothing = { usernames: [], emails: [], groupPaths: [], projectPaths: [], clientIds: [], tokenDigests: [] };
    expect(await storage.maintenance.existingNames(nothing)).toEqual({
      usernames: new Map(),
      emails: new Map(),
      groupPaths: new Map(),
      projectPaths: new Map(),
      clientIds: new Map(),
      tokenDigests: new Map(),
    });
  });

  const seed = (): SeedRows => ({
    users: [
      { user: newUser('Alice'), tokens: [{ name: 'laptop', token_digest: 'alice-digest', scopes: ['api'], created_at: created, expires_at: '2031-01-31', revoked: false }] },
      { user: newUser('bob'), tokens: [] },
    ],
    groups: [
      {
        group: newGroup('Team'),
        members: [
          { username: 'alice', access_level: 50 },
          { username: 'BOB', access_level: 30 },
        ],
      },
    ],
    projects: [
      { project: newProject('team', 'tools'), members: [{ username: 'Bob', access_level: 40 }] },
      { project: newProject('ALICE', 'notes'), members: [] },
    ],
    applications: [{ owner: 'BOB', application: { uid: 'seeded-app', secret_digest: 'seeded-secret', confidential: true, name: 'Seeded', redirect_uris: ['https://seeded.example.com/cb'], scopes: ['api'], created_at: created } }],
  });

  it('applies a seed: users with their tokens, groups and projects with members by username, applications by owner', async () => {
    const { storages: [storage] } = await open(name);
    await storage.maintenance.applySeed(seed());
    const alice = (await storage.users.byUsername('alice'))!;
    const bob = (await storage.users.byUsername('bob'))!;
    expect(alice).toEqual({ id: expect.any(Number), ...newUser('Alice') });
    expect(await storage.personalAccessTokens.ofUser(alice.id)).toEqual([
      { id: expect.any(Number), user_id: alice.id, name: 'laptop', token_digest: 'alice-digest', scopes: ['api'], created_at: created, expires_at: '2031-01-31', revoked: false },
    ]);
    const team = (await storage.namespaces.groupByPath('team'))!;
    expect(withoutMembers(team)).toEqual({ id: expect.any(Number), ...newGroup('Team') });
    expect(await storage.namespaces.groupAccess(alice.id, team)).toEqual({ direct: 50, inAProject: false });
    expect(await storage.namespaces.groupAccess(bob.id, team)).toEqual({ direct: 30, inAProject: true });
    const tools = (await storage.namespaces.projectByFullPath('team/tools'))!;
    expect(withoutMembers(tools)).toEqual({ id: expect.any(Number), namespace: 'Team', path: 'tools', name: 'The tools', visibility: 'internal', group_id: team.id, created_at: created });
    expect(await storage.namespaces.projectAccess(bob.id, tools)).toEqual({ direct: 40, inherited: 30 });
    expect(await storage.namespaces.projectAccess(alice.id, tools)).toEqual({ direct: null, inherited: 50 });
    expect(withoutMembers(await storage.namespaces.projectByFullPath('alice/notes'))).toMatchObject({ namespace: 'Alice', group_id: null });
    expect(await storage.applications.ownedBy(bob.id)).toEqual([{ id: expect.any(Number), ...seed().applications[0]!.application, owner_id: bob.id }]);
  });

  it('applies nothing of a seed with a name taken meanwhile, even in its last row, and says which', async () => {
    const { storages: [storage] } = await open(name);
    await storage.maintenance.applySeed(seed());
    const another = (last: Partial<SeedRows>): SeedRows => ({
      users: [{ user: newUser('carol'), tokens: [{ name: 't', token_digest: 'carol-digest', scopes: ['api'], created_at: created, expires_at: null, revoked: false }] }],
      groups: [{ group: newGroup('crew'), members: [{ username: 'carol', access_level: 50 }] }],
      projects: [{ project: newProject('crew', 'boat'), members: [{ username: 'alice', access_level: 30 }] }],
      applications: [{ owner: 'carol', application: { uid: 'carols-app', secret_digest: null, confidential: false, name: 'C', redirect_uris: ['https://c.example.com/cb'], scopes: ['api'], created_at: created } }],
      ...last,
    });
    const applied = async () => {
      const found = await storage.maintenance.existingNames({ usernames: ['carol', 'team'], emails: [], groupPaths: ['crew', 'alice'], projectPaths: ['crew/boat', 'team/tools'], clientIds: ['carols-app'], tokenDigests: ['carol-digest'] });
      return Object.values(found).flatMap((map) => [...map.values()]);
    };
    const existing = ['Team/tools'];
    expect(await applied()).toEqual(existing);

    const takenUid = another({ applications: [{ owner: 'carol', application: { ...seed().applications[0]!.application, uid: 'seeded-app' } }] });
    expect(await refusal(storage.maintenance.applySeed(takenUid))).toEqual({ field: 'uid', code: 'taken', message: 'the App ID "seeded-app" is already taken' });
    expect(await applied()).toEqual(existing);
    expect(await storage.users.byUsername('carol')).toBeUndefined();

    const takenProject = another({ projects: [{ project: newProject('TEAM', 'TOOLS'), members: [] }] });
    expect(await refusal(storage.maintenance.applySeed(takenProject))).toEqual({ field: 'path', code: 'taken', message: 'the project "TEAM/TOOLS" already exists' });
    const userIsGroup = another({ users: [{ user: newUser('TEAM'), tokens: [] }], groups: [], projects: [], applications: [] });
    expect(await refusal(storage.maintenance.applySeed(userIsGroup))).toEqual({ field: 'username', code: 'taken', message: 'the username "TEAM" is already taken' });
    const groupIsUser = another({ groups: [{ group: newGroup('ALICE'), members: [] }], projects: [] });
    expect(await refusal(storage.maintenance.applySeed(groupIsUser))).toEqual({ field: 'path', code: 'taken', message: 'the group "ALICE" already exists' });
    const takenAddress = another({ users: [{ user: newUser('carol', { secondary_emails: ['ALICE@example.com'] }), tokens: [] }] });
    expect(await refusal(storage.maintenance.applySeed(takenAddress))).toEqual({ field: 'secondary_emails', code: 'taken', message: 'the e-mail address "ALICE@example.com" is already in use' });
    const takenDigest = another({ users: [{ user: newUser('carol'), tokens: [{ name: 't', token_digest: 'alice-digest', scopes: ['api'], created_at: created, expires_at: null, revoked: false }] }] });
    expect(await refusal(storage.maintenance.applySeed(takenDigest))).toEqual({ field: 'token', code: 'taken', message: 'this token is already in use' });
    expect(await applied()).toEqual(existing);

    await storage.maintenance.applySeed(another({}));
    expect((await applied()).sort()).toEqual(['Team/tools', 'carol', 'carol-digest', 'carols-app', 'crew', 'crew/boat'].sort());
  });

  it('keeps an instance secret, prunes what can never be used again, reports writes and readiness, and says where the data lives', async () => {
    const { storages, described } = await open(name);
    const [storage] = storages;
    const secret = await storage.maintenance.instanceSecret('session_key');
    expect(secret).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    for (const instance of storages) expect(await instance.maintenance.instanceSecret('session_key')).toBe(secret);

    const writes: number[] = [];
    storage.maintenance.observeWrites((seconds) => writes.push(seconds));
    const user = await storage.users.create(newUser('jsmith'));
    await storage.users.byId(user.id);
    expect(writes).toHaveLength(1);
    expect(writes[0]).toBeGreaterThanOrEqual(0);
    expect(writes[0]).toBeLessThan(10);

    await storage.tokens.issue(newPair('old', null, user.id, now - 3 * day));
    await storage.tokens.revoke('old', now - 2 * day);
    await storage.tokens.issue(newPair('recent', null, user.id, now - 3 * day));
    await storage.tokens.revoke('recent', now - 60);
    expect(await storage.maintenance.prune(now)).toEqual({ authorizationCodes: 0, deviceGrants: 0, accessTokens: 1, sessions: 0, notificationMessages: 0 });
    expect(await storage.tokens.byAccessDigest('access-old')).toBeUndefined();
    expect(await storage.tokens.byAccessDigest('access-recent')).toBeDefined();

    expect(await storage.maintenance.readiness()).toEqual({ ready: true });
    expect(storage.maintenance.describe()).toBe(described);
    // Every statement above has given its connection back.
    expect(storage.maintenance.poolUsage()).toEqual(name === onPostgres ? { inUse: 0, idle: expect.any(Number), waiting: 0 } : null);
    if (name === onPostgres) expect(storage.maintenance.poolUsage()!.idle).toBeGreaterThanOrEqual(1);
  });

  it('is not ready once closed, and closing twice is harmless', async () => {
    const closable = await (await open(name)).closable();
    expect(await closable.maintenance.readiness()).toEqual({ ready: true });
    await closable.maintenance.close();
    await closable.maintenance.close();
    expect(await closable.maintenance.readiness()).toMatchObject({ ready: false, problem: expect.any(String) });
  });
});

const exampleSeed = fileURLToPath(new URL('../../fixtures/example-seed.json', import.meta.url));

/** The state a store would open with, less the journal's generation, which every compaction moves on. */
const stateOf = ({ journal: _journal, ...data }: StoreData) => structuredClone(data);

/** Changes a little of everything a test might leave behind: users, tokens, settings, sessions, mail, memberships. */
async function changeEverything(storage: Storage): Promise<void> {
  const jsmith = (await storage.users.byUsername('jsmith'))!;
  const mallory = (await storage.users.byUsername('mallory'))!;
  const newcomer = await storage.users.create(newUser('newcomer'));
  await storage.users.setPasswordHash(jsmith.id, 'scrypt$16384$8$1$salt$changed');
  await storage.personalAccessTokens.create({ user_id: newcomer.id, name: 'new', token_digest: 'newcomer-digest', scopes: ['api'], created_at: now, expires_at: null, revoked: false });
  const seeded = await storage.personalAccessTokens.withUserByDigest(digest(exampleAccounts.jsmith.pat));
  await storage.personalAccessTokens.revokeOwned(jsmith.id, seeded!.token.id);
  await storage.tokens.issue({ id: 'pair-1', token_digest: 'access-1', refresh_digest: 'refresh-1', application_id: null, user_id: jsmith.id, scopes: ['api'], now, ttl: 7200, auth_time: null });
  await storage.notificationSettings.change({ user_id: jsmith.id, source_type: 'global', source_id: null, level: 'watch', notification_email: null, events: noEvents() }, { events: {} });
  await storage.sessions.save('sid-digest-1', { cookie: {}, userId: jsmith.id }, (now + 3600) * 1000);
  const acme = (await storage.namespaces.groupByPath('acme'))!;
  await storage.namespaces.setMembership({ groupId: acme.id }, mallory.id, 40);
  await storage.namespaces.createGroup({ path: 'later', name: 'Later', visibility: 'private', created_at: now }, []);
  const application = (await storage.applications.byUid(exampleApplication.clientId))!;
  await storage.applications.deleteOwned(jsmith.id, application.id, now);
}

/** What changeEverything changed is as the seed left it. */
async function expectSeeded(storage: Storage): Promise<void> {
  expect(await storage.users.byUsername('newcomer')).toBeUndefined();
  expect(await storage.users.byLogin('newcomer@example.com')).toBeUndefined();
  const jsmith = (await storage.users.byLogin('JSmith@example.com'))!;
  expect(jsmith.password_hash).not.toBe('scrypt$16384$8$1$salt$changed');
  expect(await storage.personalAccessTokens.withUserByDigest('newcomer-digest')).toBeUndefined();
  const seeded = await storage.personalAccessTokens.withUserByDigest(digest(exampleAccounts.jsmith.pat));
  expect(seeded).toMatchObject({ token: { revoked: false }, user: { username: 'jsmith' }, globalSetting: undefined });
  expect(await storage.tokens.byAccessDigest('access-1')).toBeUndefined();
  expect(await storage.tokens.byRefreshDigest('refresh-1')).toBeUndefined();
  expect(await storage.notificationSettings.find({ user_id: jsmith.id, source_type: 'global', source_id: null })).toBeUndefined();
  expect(await storage.sessions.find('sid-digest-1', now * 1000)).toBeNull();
  const acme = (await storage.namespaces.groupByPath('acme'))!;
  const mallory = (await storage.users.byUsername('mallory'))!;
  expect(await storage.namespaces.groupAccess(mallory.id, acme)).toEqual({ direct: null, inAProject: false });
  expect(await storage.namespaces.groupAccess(jsmith.id, acme)).toEqual({ direct: 50, inAProject: false });
  expect(await storage.namespaces.groupByPath('later')).toBeUndefined();
  expect(await storage.applications.byUid(exampleApplication.clientId)).toMatchObject({ owner_id: jsmith.id });
}

describe.each(fileStores)('snapshot and restore on %s', (name) => {
  it('brings back the seeded state whole, with working indexes, however much changed, and again from the same snapshot', async () => {
    const { storages: [storage], data } = await open(name);
    await loadSeedFile(storage, exampleSeed);
    const secret = await storage.maintenance.instanceSecret('session_key');
    const snapshot = (await storage.maintenance.snapshot())!;
    const seeded = stateOf(data!());

    for (let round = 0; round < 2; round++) {
      await changeEverything(storage);
      expect(stateOf(data!())).not.toEqual(seeded);
      await storage.maintenance.restore(snapshot);
      expect(stateOf(data!())).toEqual(seeded);
      await expectSeeded(storage);
    }
    expect(await storage.maintenance.instanceSecret('session_key')).toBe(secret);
    // The sequences came back too: the next user gets the id the first newcomer had.
    const again = await storage.users.create(newUser('newcomer'));
    expect(again.id).toBe(seeded.sequences.users + 1);
  });

  it("keeps the instance's own secret, not the one of the store the snapshot was taken on", async () => {
    const { storages: [storage] } = await open(name);
    const { storages: [elsewhere] } = await open(inMemory);
    await elsewhere.users.create(newUser('elsewhere'));
    const secret = await storage.maintenance.instanceSecret('session_key');
    expect(await elsewhere.maintenance.instanceSecret('session_key')).not.toBe(secret);
    await storage.maintenance.restore((await elsewhere.maintenance.snapshot())!);
    expect(await storage.users.byUsername('elsewhere')).toMatchObject({ username: 'elsewhere' });
    expect(await storage.maintenance.instanceSecret('session_key')).toBe(secret);
  });

  it('refuses what it did not make', async () => {
    const { storages: [storage] } = await open(name);
    await expect(storage.maintenance.restore({} as StoreSnapshot)).rejects.toThrow(TypeError);
  });
});

describe('snapshot and restore on the file store on disk', () => {
  it('is durable once restored: the file and its journal hold the restored state, and so does the store reopened', async () => {
    const { storages: [storage], data, durableData, reopen } = await open(onDisk);
    await loadSeedFile(storage, exampleSeed);
    const snapshot = (await storage.maintenance.snapshot())!;
    const seeded = stateOf(data!());
    await changeEverything(storage);
    await storage.maintenance.restore(snapshot);
    // What a crash now would leave, read as the next start would read it.
    expect(stateOf(await durableData!())).toEqual(seeded);
    const reopened = await reopen();
    expect(stateOf(data!())).toEqual(seeded);
    await expectSeeded(reopened);
    // The journal goes on from the restored state.
    await reopened.users.create(newUser('after'));
    expect((await durableData!()).users.map((u) => u.username)).toEqual([...seeded.users.map((u) => u.username), 'after']);
  });

  it('writes a restore made while the previous one is still being written', async () => {
    const { storages: [storage], data, durableData } = await open(onDisk);
    const empty = (await storage.maintenance.snapshot())!;
    await storage.users.create(newUser('first'));
    const withFirst = (await storage.maintenance.snapshot())!;
    await storage.users.create(newUser('second'));
    const restoring = storage.maintenance.restore(withFirst);
    // One microtask: the first restore's compaction has serialised memory and is writing it out.
    await null;
    const emptied = storage.maintenance.restore(empty);
    await Promise.all([restoring, emptied]);
    expect(data!().users).toEqual([]);
    expect((await durableData!()).users).toEqual([]);
  });
});

describe('maintenance on PostgreSQL', () => {
  it('answers no snapshot, as every instance on the database shares the state, and refuses to restore one', async () => {
    const { storages: [storage] } = await open(onPostgres);
    expect(await storage.maintenance.snapshot()).toBeNull();
    await expect(storage.maintenance.restore({} as StoreSnapshot)).rejects.toThrow(/every instance on the database/);
  });

  it('names what is wrong when the database cannot be reached, without its credentials, and says what it was told to', async () => {
    const pool = new pg.Pool({ connectionString: 'postgres://tokenbell:hunter2-secret@127.0.0.1:1/tokenbell', connectionTimeoutMillis: 5000 });
    const storage = postgresStorageOn(pool, { describe: 'PostgreSQL at 127.0.0.1:1/tokenbell' });
    try {
      const readiness = await storage.maintenance.readiness();
      expect(readiness).toEqual({ ready: false, problem: expect.stringMatching(/^the database cannot be reached: \S/) });
      expect(readiness.problem).not.toContain('hunter2');
      expect(storage.maintenance.describe()).toBe('PostgreSQL at 127.0.0.1:1/tokenbell');
    } finally {
      await storage.maintenance.close();
    }
  });
});
