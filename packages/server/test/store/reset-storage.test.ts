// What the test kit asks of storage (issue 19): a snapshot of the whole state that a restore brings back, before every
// test, on the stores that live in one instance (the file store in memory and on disk; PostgreSQL, shared by every
// instance on the database, refuses); and memberships set at run time, on all three alike.
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { InputError } from '../../src/explained-error.js';
import { noEvents } from '../../src/domain/notification-levels.js';
import { digest } from '../../src/domain/secrets.js';
import { openStore, readDurableData, type Store } from '../../src/store/file/store.js';
import { fileStorage } from '../../src/store/file/storage.js';
import { postgresStorage } from '../../src/store/postgres/storage.js';
import type { StoreData } from '../../src/store/file/schema.js';
import { loadSeedFile } from '../../src/domain/seed/load.js';
import type { NewUserRow, Storage, StoreSnapshot } from '../../src/domain/storage/index.js';
import { migratedDatabase } from '../../../../test/support/postgres.js';
import { exampleAccounts, exampleApplication } from '../support/example-seed.js';
import { useTempStores } from './temp-store.js';

const exampleSeed = fileURLToPath(new URL('../../fixtures/example-seed.json', import.meta.url));

interface Subject {
  storage: Storage;
  /** The file store underneath, whose whole state a test can compare; none on PostgreSQL. */
  store?: Store;
  /** The data file, for the file store on disk. */
  file?: string;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const temp = useTempStores();

const implementations: Record<string, () => Promise<Subject>> = {
  'the file store in memory': async () => {
    const store = await openStore({ file: null });
    cleanups.push(() => store.close());
    return { storage: fileStorage(store), store };
  },
  'the file store on disk': async () => {
    const file = temp.file();
    const store = await temp.open(file);
    return { storage: fileStorage(store), store, file };
  },
  PostgreSQL: async () => {
    const { pools, close } = await migratedDatabase(inject('postgresUrl'));
    cleanups.push(close);
    return { storage: postgresStorage(pools[0]!) };
  },
};
const fileStores = Object.keys(implementations).filter((name) => name !== 'PostgreSQL');

const now = Math.floor(Date.UTC(2026, 10, 25, 12) / 1000);
const newUser = (username: string): NewUserRow => ({
  username,
  email: `${username}@example.com`,
  secondary_emails: [],
  name: username,
  password_hash: 'scrypt$16384$8$1$salt$hash',
  two_factor_enabled: false,
  otp_secret: null,
  otp_last_step: null,
  state: 'active',
  is_admin: false,
  bio: '',
  created_at: now,
});

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
  await storage.tokens.issue({ id: 'pair-1', token_digest: 'access-1', refresh_digest: 'refresh-1', application_id: null, user_id: jsmith.id, scopes: ['api'], now, ttl: 7200 });
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
  const subject = () => implementations[name]!();

  it('brings back the seeded state whole, with working indexes, however much changed, and again from the same snapshot', async () => {
    const { storage, store } = await subject();
    await loadSeedFile(storage, exampleSeed);
    const secret = await storage.maintenance.instanceSecret('session_key');
    const snapshot = (await storage.maintenance.snapshot())!;
    const seeded = stateOf(store!.data);

    for (let round = 0; round < 2; round++) {
      await changeEverything(storage);
      expect(stateOf(store!.data)).not.toEqual(seeded);
      await storage.maintenance.restore(snapshot);
      expect(stateOf(store!.data)).toEqual(seeded);
      await expectSeeded(storage);
    }
    expect(await storage.maintenance.instanceSecret('session_key')).toBe(secret);
    // The sequences came back too: the next user gets the id the first newcomer had.
    const again = await storage.users.create(newUser('newcomer'));
    expect(again.id).toBe(seeded.sequences.users + 1);
  });

  it("keeps the instance's own secret, not the one of the store the snapshot was taken on", async () => {
    const { storage } = await subject();
    const other = await openStore({ file: null });
    cleanups.push(() => other.close());
    const elsewhere = fileStorage(other);
    await elsewhere.users.create(newUser('elsewhere'));
    const secret = await storage.maintenance.instanceSecret('session_key');
    expect(await elsewhere.maintenance.instanceSecret('session_key')).not.toBe(secret);
    await storage.maintenance.restore((await elsewhere.maintenance.snapshot())!);
    expect(await storage.users.byUsername('elsewhere')).toMatchObject({ username: 'elsewhere' });
    expect(await storage.maintenance.instanceSecret('session_key')).toBe(secret);
  });

  it('refuses what it did not make', async () => {
    const { storage } = await subject();
    await expect(storage.maintenance.restore({} as StoreSnapshot)).rejects.toThrow(TypeError);
  });
});

describe('snapshot and restore on the file store on disk', () => {
  it('is durable once restored: the file and its journal hold the restored state, and so does the store reopened', async () => {
    const { storage, store, file } = await implementations['the file store on disk']!();
    await loadSeedFile(storage, exampleSeed);
    const snapshot = (await storage.maintenance.snapshot())!;
    const seeded = stateOf(store!.data);
    await changeEverything(storage);
    await storage.maintenance.restore(snapshot);
    // What a crash now would leave, read as the next start would read it.
    expect(stateOf(await readDurableData(file!))).toEqual(seeded);
    await store!.close();
    const reopened = await temp.open(file!);
    expect(stateOf(reopened.data)).toEqual(seeded);
    await expectSeeded(fileStorage(reopened));
    // The journal goes on from the restored state.
    await fileStorage(reopened).users.create(newUser('after'));
    expect((await readDurableData(file!)).users.map((u) => u.username)).toEqual([...seeded.users.map((u) => u.username), 'after']);
  });

  it('writes a restore made while the previous one is still being written', async () => {
    const { storage, store, file } = await implementations['the file store on disk']!();
    const empty = (await storage.maintenance.snapshot())!;
    await storage.users.create(newUser('first'));
    const withFirst = (await storage.maintenance.snapshot())!;
    await storage.users.create(newUser('second'));
    const restoring = storage.maintenance.restore(withFirst);
    // One microtask: the first restore's compaction has serialised memory and is writing it out.
    await null;
    const emptied = storage.maintenance.restore(empty);
    await Promise.all([restoring, emptied]);
    expect(store!.data.users).toEqual([]);
    expect((await readDurableData(file!)).users).toEqual([]);
  });
});

describe('snapshot and restore on PostgreSQL', () => {
  it('answers no snapshot, as every instance on the database shares the state, and refuses to restore one', async () => {
    const { storage } = await implementations.PostgreSQL!();
    expect(await storage.maintenance.snapshot()).toBeNull();
    await expect(storage.maintenance.restore({} as StoreSnapshot)).rejects.toThrow(/every instance on the database/);
  });
});

/** The InputError a call is refused with, as plain values. */
async function refusal(call: Promise<unknown>): Promise<{ field: string; code: string; message: string }> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    return { field: error.field, code: error.code, message: error.message };
  }
  throw new Error('expected an InputError, but the call succeeded');
}

describe.each(Object.keys(implementations))('memberships set at run time on %s', (name) => {
  const subject = () => implementations[name]!();

  it("adds a membership to a group or project, changes its level, one per user, as projectAccess, groupAccess and the audience read it", async () => {
    const { storage } = await subject();
    const [owner, developer, guest] = await Promise.all(['owner', 'developer', 'guest'].map((u) => storage.users.create(newUser(u))));
    const acme = await storage.namespaces.createGroup({ path: 'acme', name: 'Acme', visibility: 'private', created_at: now }, [{ user_id: owner!.id, access_level: 50 }]);
    const project = (path: string) => ({ namespace: 'acme', path, name: path, visibility: 'private' as const, created_at: now });
    // Listed twice: the first entry counts until the membership is set.
    const widgets = await storage.namespaces.createProject(project('widgets'), [
      { user_id: developer!.id, access_level: 30 },
      { user_id: developer!.id, access_level: 40 },
    ]);
    const dotfiles = await storage.namespaces.createProject({ ...project('dotfiles'), namespace: 'owner' }, []);
    const { setMembership, projectAccess, groupAccess } = storage.namespaces;

    await setMembership({ groupId: acme.id }, guest!.id, 10);
    expect(await groupAccess(guest!.id, acme)).toEqual({ direct: 10, inAProject: false });
    expect(await projectAccess(guest!.id, widgets)).toEqual({ direct: null, inherited: 10 });
    await setMembership({ groupId: acme.id }, guest!.id, 20);
    expect(await groupAccess(guest!.id, acme)).toEqual({ direct: 20, inAProject: false });
    await setMembership({ groupId: acme.id }, owner!.id, 40);
    expect(await groupAccess(owner!.id, acme)).toEqual({ direct: 40, inAProject: false });

    await setMembership({ projectId: widgets.id }, developer!.id, 20);
    expect(await projectAccess(developer!.id, widgets)).toEqual({ direct: 20, inherited: null });
    await setMembership({ projectId: widgets.id }, guest!.id, 30);
    expect(await projectAccess(guest!.id, widgets)).toEqual({ direct: 30, inherited: 20 });
    expect(await groupAccess(guest!.id, acme)).toEqual({ direct: 20, inAProject: true });
    await setMembership({ projectId: dotfiles.id }, guest!.id, 40);
    expect(await projectAccess(guest!.id, dotfiles)).toEqual({ direct: 40, inherited: null });
    expect((await storage.namespaces.projectWithAccess({ path: 'acme/widgets' }, developer!.id))!.access).toEqual({ direct: 20, inherited: null });

    const audience = (await storage.recipients.audience(widgets.id, []))!;
    expect([...audience.interested].sort()).toEqual([owner!.id, developer!.id, guest!.id].sort());
    expect(audience.members.get(developer!.id)!.access).toEqual({ direct: 20, inherited: null });
    expect(audience.members.get(guest!.id)!.access).toEqual({ direct: 30, inherited: 20 });
  });

  it('sets a membership in a long member list', async () => {
    const { storage } = await subject();
    const users = [];
    for (let i = 0; i < 40; i++) users.push(await storage.users.create(newUser(`member${i}`)));
    await storage.users.create(newUser('owner'));
    const project = await storage.namespaces.createProject(
      { namespace: 'owner', path: 'big', name: 'big', visibility: 'private', created_at: now },
      users.map((u) => ({ user_id: u.id, access_level: 20 })),
    );
    expect(await storage.namespaces.projectAccess(users[7]!.id, project)).toEqual({ direct: 20, inherited: null });
    await storage.namespaces.setMembership({ projectId: project.id }, users[7]!.id, 40);
    expect(await storage.namespaces.projectAccess(users[7]!.id, project)).toEqual({ direct: 40, inherited: null });
    expect(await storage.namespaces.projectAccess(users[8]!.id, project)).toEqual({ direct: 20, inherited: null });
  });

  it('refuses an unknown user, group or project, changing nothing', async () => {
    const { storage } = await subject();
    const user = await storage.users.create(newUser('owner'));
    const group = await storage.namespaces.createGroup({ path: 'acme', name: 'Acme', visibility: 'private', created_at: now }, []);
    const project = await storage.namespaces.createProject({ namespace: 'acme', path: 'widgets', name: 'w', visibility: 'private', created_at: now }, []);
    const { setMembership } = storage.namespaces;
    expect(await refusal(setMembership({ groupId: 9999 }, user.id, 30))).toEqual({ field: 'group_id', code: 'unknown', message: 'there is no group with id 9999' });
    expect(await refusal(setMembership({ projectId: 9999 }, user.id, 30))).toEqual({ field: 'project_id', code: 'unknown', message: 'there is no project with id 9999' });
    expect(await refusal(setMembership({ groupId: group.id }, 9999, 30))).toEqual({ field: 'user_id', code: 'unknown', message: 'there is no user with id 9999' });
    expect(await refusal(setMembership({ projectId: project.id }, 9999, 30))).toEqual({ field: 'user_id', code: 'unknown', message: 'there is no user with id 9999' });
    expect(await storage.namespaces.projectAccess(user.id, project)).toEqual({ direct: null, inherited: null });
  });
});
