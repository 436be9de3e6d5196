// The storage contract, on each store: the file store in memory and on disk, and PostgreSQL. Each test runs the same
// calls and expects the same answers of all three (the file store is the reference), down to the words of a refusal
// and the order of a list; PostgreSQL also from two pools at once, as two instances would, where races matter.
// Grants, notification settings and sessions have tests of their own.
import { resolve } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { InputError } from '../../src/explained-error.js';
import { noEvents } from '../../src/domain/notification-levels.js';
import { openStore } from '../../src/store/file/store.js';
import { fileStorage } from '../../src/store/file/storage.js';
import type { NewTokenPair } from '../../src/domain/storage/index.js';
import { postgresStorage } from '../../src/store/postgres/storage.js';
import type { AuthorizationCodeRecord, NotificationSettingRecord, UserRecord } from '../../src/domain/storage/records.js';
import type { NewApplicationRow, NewGroupRow, NewPersonalAccessTokenRow, NewProjectRow, NewUserRow, SeedRows, Storage } from '../../src/domain/storage/index.js';
import { migratedDatabase } from '../../../../test/support/postgres.js';
import { useTempStores } from './temp-store.js';

interface Subject {
  /** One storage per instance: a file store has one, PostgreSQL two, on two pools of one database. */
  storages: [Storage, ...Storage[]];
  /** What `describe()` answers. */
  described: string;
  /** A storage on the same data that a test may close. */
  closable(): Promise<Storage>;
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
    const storage = fileStorage(store);
    return { storages: [storage], described: 'in memory', closable: async () => storage };
  },
  'the file store on disk': async () => {
    const file = temp.file();
    const storage = fileStorage(await temp.open(file));
    return { storages: [storage], described: resolve(file), closable: async () => storage };
  },
  PostgreSQL: async () => {
    const { url, pools, close } = await migratedDatabase(inject('postgresUrl'), 2);
    cleanups.push(close);
    const [first, ...others] = pools.map((pool) => postgresStorage(pool));
    return { storages: [first!, ...others], described: 'PostgreSQL', closable: async () => postgresStorage(new pg.Pool({ connectionString: url, max: 2 })) };
  },
};

/** 2026-11-25T12:00:00Z */
const created = 1795608000;
const now = Math.floor(Date.UTC(2026, 10, 25, 12) / 1000);
const day = 86_400;

const newUser = (username: string, fields: Partial<NewUserRow> = {}): NewUserRow => ({
  username,
  email: `${username.toLowerCase()}@example.com`,
  secondary_emails: [],
  name: `${username} Example`,
  password_hash: 'scrypt$16384$8$1$salt$hash',
  two_factor_enabled: false,
  otp_secret: null,
  otp_last_step: null,
  state: 'active',
  is_admin: false,
  bio: '',
  created_at: created,
  ...fields,
});
const newGroup = (path: string): NewGroupRow => ({ path, name: `The ${path}`, visibility: 'private', created_at: created });
const newProject = (namespace: string, path: string): NewProjectRow => ({ namespace, path, name: `The ${path}`, visibility: 'internal', created_at: created });
const newApplication = (ownerId: number, uid: string, confidential = true): NewApplicationRow => ({
  uid,
  secret_digest: confidential ? `secret-digest-of-${uid}` : null,
  confidential,
  name: `The ${uid}`,
  redirect_uris: ['https://app.example.com/cb', 'http://127.0.0.1:8080/cb'],
  scopes: ['api', 'read_user'],
  owner_id: ownerId,
  created_at: created,
});
const newToken = (userId: number, tokenDigest: string, expiresAt: string | null = null): NewPersonalAccessTokenRow => ({
  user_id: userId,
  name: `token ${tokenDigest}`,
  token_digest: tokenDigest,
  scopes: ['read_api'],
  created_at: created,
  expires_at: expiresAt,
  revoked: false,
});
const newCode = (id: string, applicationId: number, userId: number, fields: Partial<AuthorizationCodeRecord> = {}): AuthorizationCodeRecord => ({
  id,
  code_digest: `code-digest-${id}`,
  application_id: applicationId,
  user_id: userId,
  redirect_uri: 'https://app.example.com/cb',
  scopes: ['api'],
  code_challenge: null,
  code_challenge_method: null,
  created_at: now - 60,
  expires_at: now + 540,
  used_at: null,
  ...fields,
});
const newPair = (id: string, applicationId: number | null, userId: number, issuedAt = now - 100): NewTokenPair => ({
  id,
  token_digest: `access-${id}`,
  refresh_digest: `refresh-${id}`,
  application_id: applicationId,
  user_id: userId,
  scopes: ['api'],
  now: issuedAt,
  ttl: 7200,
});
const setting = (userId: number, sourceType: NotificationSettingRecord['source_type'], sourceId: number | null, level: NotificationSettingRecord['level']): NotificationSettingRecord => ({
  user_id: userId,
  source_type: sourceType,
  source_id: sourceId,
  level,
  notification_email: null,
  events: noEvents(),
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

/** The file store's groups and projects carry their member lists; the interface's do not promise them. */
function withoutMembers<T extends object>(record: T | undefined): Omit<T, 'members'> | undefined {
  if (record === undefined) return undefined;
  const { members: _members, ...rest } = record as T & { members?: unknown };
  return rest;
}

/** Redeems a code and answers only the outcome: `unknown` shows the code is gone. */
const redeem = (storage: Storage, id: string, applicationId: number) =>
  storage.grants.redeemCode(`code-digest-${id}`, applicationId, () => undefined, (code) => newPair(`from-${id}`, code.application_id, code.user_id), now).then((r) => r.outcome);

describe.each(Object.keys(implementations))('storage on %s', (name) => {
  const subject = () => implementations[name]!();

  describe('users', () => {
    it('creates a user, then finds it by id, by username and by login (username or e-mail address), whatever the case', async () => {
      const { storages: [storage] } = await subject();
      expect(await storage.users.any()).toBe(false);
      const row = newUser('JSmith', { email: 'Jane.Smith@Example.com', two_factor_enabled: true, otp_secret: 'JBSWY3DPEHPK3PXP', is_admin: true, bio: 'Writes things.' });
      const jsmith = await storage.users.create(row);
      expect(jsmith).toEqual({ id: expect.any(Number), ...row });
      expect(await storage.users.any()).toBe(true);
      expect(await storage.users.byId(jsmith.id)).toEqual(jsmith);
      expect(await storage.users.byUsername('jsmith')).toEqual(jsmith);
      expect(await storage.users.byLogin('JSMITH')).toEqual(jsmith);
      expect(await storage.users.byLogin('jane.smith@EXAMPLE.com')).toEqual(jsmith);
      expect(await storage.users.byUsername('Jane.Smith@Example.com')).toBeUndefined();
      expect(await storage.users.byLogin('nobody')).toBeUndefined();
      expect(await storage.users.byId(jsmith.id + 1)).toBeUndefined();
      expect(await storage.users.byId(Number.NaN)).toBeUndefined();
      expect(await storage.users.byUsername('js\0mith')).toBeUndefined();
    });

    it("answers the user whose username is the login before one whose e-mail address is; ids grow", async () => {
      const { storages: [storage] } = await subject();
      const byMail = await storage.users.create(newUser('first', { email: 'Carol' }));
      const carol = await storage.users.create(newUser('carol'));
      expect(carol.id).toBeGreaterThan(byMail.id);
      expect((await storage.users.byLogin('CAROL'))?.id).toBe(carol.id);
    });

    it("refuses a username or e-mail address in use, whatever the case, and a username that is a group's path", async () => {
      const { storages: [storage] } = await subject();
      await storage.users.create(newUser('jsmith'));
      await storage.namespaces.createGroup(newGroup('Acme'), []);
      expect(await refusal(storage.users.create(newUser('JSMITH', { email: 'other@example.com' })))).toEqual({ field: 'username', code: 'taken', message: 'the username "JSMITH" is already taken' });
      expect(await refusal(storage.users.create(newUser('other', { email: 'JSMITH@example.com' })))).toEqual({
        field: 'email',
        code: 'taken',
        message: 'the e-mail address "JSMITH@example.com" is already in use',
      });
      expect(await refusal(storage.users.create(newUser('acme')))).toEqual({ field: 'username', code: 'taken', message: `the username "acme" is already a group's path` });
      expect(await storage.users.byUsername('other')).toBeUndefined();
      expect(await storage.users.byUsername('acme')).toBeUndefined();
    });

    it("keeps a user's secondary e-mail addresses as spelt and in order, wherever the user is read; only the primary one is a login", async () => {
      const { storages: [storage] } = await subject();
      const row = newUser('jsmith', { secondary_emails: ['Jane@Work.example', 'j@home.example', 'a@z.example'] });
      const jsmith = await storage.users.create(row);
      expect(jsmith).toEqual({ id: expect.any(Number), ...row });
      expect(await storage.users.byId(jsmith.id)).toEqual(jsmith);
      expect(await storage.users.byUsername('JSMITH')).toEqual(jsmith);
      expect(await storage.users.byLogin('jsmith@example.com')).toEqual(jsmith);
      // As on the service: sign-in takes the username or the primary address.
      expect(await storage.users.byLogin('jane@work.example')).toBeUndefined();
      const changed = await storage.users.setPasswordHash(jsmith.id, 'scrypt$new');
      expect(changed).toEqual({ ...jsmith, password_hash: 'scrypt$new' });
      await storage.tokens.issue(newPair('mine', null, jsmith.id));
      await storage.personalAccessTokens.create(newToken(jsmith.id, 'pat-mine'));
      expect((await storage.tokens.withUserByAccessDigest('access-mine'))?.user).toEqual(changed);
      expect((await storage.personalAccessTokens.withUserByDigest('pat-mine'))?.user).toEqual(changed);
      const dotfiles = await storage.namespaces.createProject(newProject('jsmith', 'dotfiles'), [{ user_id: jsmith.id, access_level: 40 }]);
      expect((await storage.recipients.audience(dotfiles.id, []))?.members.get(jsmith.id)?.user).toEqual(changed);
    });

    it("refuses an address that is any user's already, primary or secondary, whatever the case, or that a new user lists twice; keeps nothing of a refused user", async () => {
      const { storages: [storage] } = await subject();
      await storage.users.create(newUser('jsmith', { secondary_emails: ['Jane@Work.example'] }));
      const refused = (fields: Partial<NewUserRow>) => refusal(storage.users.create(newUser('other', fields)));
      const inUse = (field: string, address: string) => ({ field, code: 'taken', message: `the e-mail address "${address}" is already in use` });
      expect(await refused({ email: 'JANE@work.example' })).toEqual(inUse('email', 'JANE@work.example'));
      expect(await refused({ secondary_emails: ['o@example.com', 'JSMITH@example.com'] })).toEqual(inUse('secondary_emails', 'JSMITH@example.com'));
      expect(await refused({ secondary_emails: ['jane@WORK.example'] })).toEqual(inUse('secondary_emails', 'jane@WORK.example'));
      expect(await refused({ secondary_emails: ['o@example.com', 'O@example.com'] })).toEqual(inUse('secondary_emails', 'O@example.com'));
      expect(await refused({ secondary_emails: ['OTHER@example.com'] })).toEqual(inUse('secondary_emails', 'OTHER@example.com'));
      expect(await storage.users.byUsername('other')).toBeUndefined();
      // The refused users' addresses were not kept either.
      expect((await storage.users.create(newUser('other', { secondary_emails: ['o@example.com'] }))).secondary_emails).toEqual(['o@example.com']);
    });

    it('changes the password hash and answers the user as it now is; undefined for an unknown user', async () => {
      const { storages: [storage] } = await subject();
      const user = await storage.users.create(newUser('jsmith'));
      const changed = await storage.users.setPasswordHash(user.id, 'scrypt$new');
      expect(changed).toEqual({ ...user, password_hash: 'scrypt$new' });
      expect(await storage.users.byId(user.id)).toEqual(changed);
      expect(await storage.users.setPasswordHash(user.id + 1, 'scrypt$x')).toBeUndefined();
    });

    it('spends each TOTP step once, and only a later one after it; never for a blocked or unknown user', async () => {
      const { storages: [storage] } = await subject();
      const user = await storage.users.create(newUser('jsmith', { two_factor_enabled: true, otp_secret: 'JBSWY3DPEHPK3PXP' }));
      const blocked = await storage.users.create(newUser('blocked', { state: 'blocked', two_factor_enabled: true, otp_secret: 'JBSWY3DPEHPK3PXP' }));
      expect(await storage.users.spendOtpStep(user.id, 100)).toBe(true);
      expect(await storage.users.spendOtpStep(user.id, 100)).toBe(false);
      expect(await storage.users.spendOtpStep(user.id, 99)).toBe(false);
      expect(await storage.users.spendOtpStep(user.id, 101)).toBe(true);
      expect((await storage.users.byId(user.id))?.otp_last_step).toBe(101);
      expect(await storage.users.spendOtpStep(blocked.id, 100)).toBe(false);
      expect((await storage.users.byId(blocked.id))?.otp_last_step).toBeNull();
      expect(await storage.users.spendOtpStep(blocked.id + 1, 100)).toBe(false);
    });
  });

  describe('namespaces', () => {
    it("creates a group, finds it by id and by path whatever the case, and refuses a path that is a group's or a username", async () => {
      const { storages: [storage] } = await subject();
      const owner = await storage.users.create(newUser('JSmith'));
      const acme = await storage.namespaces.createGroup(newGroup('Acme'), [{ user_id: owner.id, access_level: 50 }]);
      expect(withoutMembers(acme)).toEqual({ id: expect.any(Number), ...newGroup('Acme') });
      expect(withoutMembers(await storage.namespaces.groupById(acme.id))).toEqual(withoutMembers(acme));
      expect(withoutMembers(await storage.namespaces.groupByPath('ACME'))).toEqual(withoutMembers(acme));
      expect(await storage.namespaces.groupByPath('acme-corp')).toBeUndefined();
      expect(await storage.namespaces.groupById(acme.id + 1)).toBeUndefined();
      expect(await refusal(storage.namespaces.createGroup(newGroup('acme'), []))).toEqual({ field: 'path', code: 'taken', message: 'the group "acme" already exists' });
      expect(await refusal(storage.namespaces.createGroup(newGroup('jsmith'), []))).toEqual({ field: 'path', code: 'taken', message: '"jsmith" is already a username' });
      expect(await storage.namespaces.groupByPath('jsmith')).toBeUndefined();
    });

    it("creates a project in a group's or a user's namespace, spelt as stored, and finds it by id and by full path whatever the case", async () => {
      const { storages: [storage] } = await subject();
      await storage.users.create(newUser('JSmith'));
      const acme = await storage.namespaces.createGroup(newGroup('Acme'), []);
      const widgets = await storage.namespaces.createProject(newProject('ACME', 'Widgets'), []);
      expect(withoutMembers(widgets)).toEqual({ id: expect.any(Number), namespace: 'Acme', path: 'Widgets', name: 'The Widgets', visibility: 'internal', group_id: acme.id, created_at: created });
      const dotfiles = await storage.namespaces.createProject(newProject('jsmith', 'dotfiles'), []);
      expect(withoutMembers(dotfiles)).toEqual({ id: expect.any(Number), namespace: 'JSmith', path: 'dotfiles', name: 'The dotfiles', visibility: 'internal', group_id: null, created_at: created });
      expect(withoutMembers(await storage.namespaces.projectById(widgets.id))).toEqual(withoutMembers(widgets));
      expect(withoutMembers(await storage.namespaces.projectByFullPath('acme/WIDGETS'))).toEqual(withoutMembers(widgets));
      expect(withoutMembers(await storage.namespaces.projectByFullPath('JSMITH/Dotfiles'))).toEqual(withoutMembers(dotfiles));
      expect(await storage.namespaces.projectByFullPath('acme/dotfiles')).toBeUndefined();
      expect(await storage.namespaces.projectById(Number.NaN)).toBeUndefined();
      expect(await refusal(storage.namespaces.createProject(newProject('nobody', 'x'), []))).toEqual({ field: 'namespace', code: 'unknown', message: `"nobody" is neither a group's path nor a username` });
      expect(await refusal(storage.namespaces.createProject(newProject('acme', 'widgets'), []))).toEqual({ field: 'path', code: 'taken', message: 'the project "Acme/widgets" already exists' });
    });

    it("answers a user's access to a project (direct, through its group) and to a group (direct, in one of its projects)", async () => {
      const { storages: [storage] } = await subject();
      const [owner, developer, guest, outsider] = await Promise.all(['owner', 'developer', 'guest', 'outsider'].map((u) => storage.users.create(newUser(u))));
      const acme = await storage.namespaces.createGroup(newGroup('acme'), [
        { user_id: owner!.id, access_level: 50 },
        { user_id: guest!.id, access_level: 10 },
      ]);
      const widgets = await storage.namespaces.createProject(newProject('acme', 'widgets'), [
        { user_id: developer!.id, access_level: 30 },
        { user_id: guest!.id, access_level: 20 },
        // Listed twice: the first entry counts.
        { user_id: developer!.id, access_level: 40 },
      ]);
      const dotfiles = await storage.namespaces.createProject(newProject('owner', 'dotfiles'), [{ user_id: outsider!.id, access_level: 30 }]);
      const { projectAccess, groupAccess } = storage.namespaces;
      expect(await projectAccess(developer!.id, widgets)).toEqual({ direct: 30, inherited: null });
      expect(await projectAccess(owner!.id, widgets)).toEqual({ direct: null, inherited: 50 });
      expect(await projectAccess(guest!.id, widgets)).toEqual({ direct: 20, inherited: 10 });
      expect(await projectAccess(outsider!.id, widgets)).toEqual({ direct: null, inherited: null });
      expect(await projectAccess(outsider!.id, dotfiles)).toEqual({ direct: 30, inherited: null });
      expect(await projectAccess(owner!.id, dotfiles)).toEqual({ direct: null, inherited: null });
      expect(await groupAccess(developer!.id, acme)).toEqual({ direct: null, inAProject: true });
      expect(await groupAccess(owner!.id, acme)).toEqual({ direct: 50, inAProject: false });
      expect(await groupAccess(guest!.id, acme)).toEqual({ direct: 10, inAProject: true });
      expect(await groupAccess(outsider!.id, acme)).toEqual({ direct: null, inAProject: false });

      // The same standing found with the namespace, by id or by path in any case; nothing for an unknown one.
      const { projectWithAccess, groupWithAccess } = storage.namespaces;
      for (const ref of [{ id: widgets.id }, { path: 'ACME/Widgets' }]) {
        const found = await projectWithAccess(ref, guest!.id);
        expect(withoutMembers(found!.project)).toEqual(withoutMembers(widgets));
        expect(found!.access).toEqual({ direct: 20, inherited: 10 });
      }
      expect((await projectWithAccess({ path: 'owner/dotfiles' }, owner!.id))!.access).toEqual({ direct: null, inherited: null });
      for (const ref of [{ id: acme.id }, { path: 'Acme' }]) {
        const found = await groupWithAccess(ref, developer!.id);
        expect(withoutMembers(found!.group)).toEqual(withoutMembers(acme));
        expect(found!.access).toEqual({ direct: null, inAProject: true });
      }
      expect((await groupWithAccess({ id: acme.id }, outsider!.id))!.access).toEqual({ direct: null, inAProject: false });
      for (const ref of [{ id: 9999 }, { id: 1.5 }, { path: 'acme/nothing' }, { path: 'acme' }]) expect(await projectWithAccess(ref, owner!.id)).toBeUndefined();
      for (const ref of [{ id: 9999 }, { path: 'nothing' }]) expect(await groupWithAccess(ref, owner!.id)).toBeUndefined();
    });

    // PostgreSQL answers what is asked in one turn from one statement (store/postgres/batch.ts): each caller must still
    // get its own answer, whatever else shares the statement.
    it('answers credentials, applications and namespaces asked all at once, each caller its own', async () => {
      const { storages: [storage] } = await subject();
      const users = await Promise.all(Array.from({ length: 40 }, (_, i) => storage.users.create(newUser(`user${i}`))));
      for (const user of users) {
        await storage.tokens.issue(newPair(`of-${user.username}`, null, user.id));
        await storage.personalAccessTokens.create(newToken(user.id, `pat-of-${user.username}`));
      }
      const acme = await storage.namespaces.createGroup(newGroup('acme'), [{ user_id: users[0]!.id, access_level: 50 }]);
      const widgets = await storage.namespaces.createProject(newProject('acme', 'widgets'), [{ user_id: users[1]!.id, access_level: 30 }]);
      const applications = await Promise.all(users.slice(0, 5).map((user) => storage.applications.create(newApplication(user.id, `app-of-${user.username}`))));
      // Every user's token and personal access token, one of them twice, and two that do not exist, all at once.
      const asked = [...users.map((user) => user.username), 'user7', 'nobody'];
      const [tokens, personal, projects, groups] = await Promise.all([
        Promise.all(asked.map((name) => storage.tokens.withUserByAccessDigest(`access-of-${name}`))),
        Promise.all(asked.map((name) => storage.personalAccessTokens.withUserByDigest(`pat-of-${name}`))),
        Promise.all(users.slice(0, 3).flatMap((user) => [{ id: widgets.id }, { path: 'ACME/widgets' }, { id: 9999 }].map((ref) => storage.namespaces.projectWithAccess(ref, user.id)))),
        Promise.all(users.slice(0, 3).flatMap((user) => [{ id: acme.id }, { path: 'acme' }].map((ref) => storage.namespaces.groupWithAccess(ref, user.id)))),
      ]);
      const [byUid, byId] = await Promise.all([
        Promise.all([...applications.map((app) => app.uid), 'app-of-user2', 'app-of-nobody'].map((uid) => storage.applications.byUid(uid))),
        Promise.all([...applications.map((app) => app.id), 9999].map((id) => storage.applications.byId(id))),
      ]);
      expect(byUid.map((app) => app?.owner_id ?? null)).toEqual([...users.slice(0, 5).map((user) => user.id), users[2]!.id, null]);
      expect(byId).toEqual([...applications, undefined]);
      const [usersById, byAccess, byRefresh] = await Promise.all([
        Promise.all([...users.map((user) => user.id), 9999].map((id) => storage.users.byId(id))),
        Promise.all(asked.map((name) => storage.tokens.byAccessDigest(`access-of-${name}`))),
        Promise.all(asked.map((name) => storage.tokens.byRefreshDigest(`refresh-of-${name}`))),
      ]);
      expect(usersById).toEqual([...users, undefined]);
      for (const found of [byAccess, byRefresh]) expect(found.map((token) => token?.id ?? null)).toEqual([...users.map((user) => `of-${user.username}`), 'of-user7', null]);
      expect(tokens.map((found) => found?.user.username ?? null)).toEqual([...users.map((user) => user.username), 'user7', null]);
      expect(tokens.slice(0, 40).map((found) => found!.token.token_digest)).toEqual(users.map((user) => `access-of-${user.username}`));
      expect(personal.map((found) => found?.user.username ?? null)).toEqual([...users.map((user) => user.username), 'user7', null]);
      expect(projects.map((found) => found && found.access)).toEqual([
        ...[{ direct: null, inherited: 50 }, { direct: null, inherited: 50 }, undefined],
        ...[{ direct: 30, inherited: null }, { direct: 30, inherited: null }, undefined],
        ...[{ direct: null, inherited: null }, { direct: null, inherited: null }, undefined],
      ]);
      expect(groups.map((found) => found!.access)).toEqual([
        ...[{ direct: 50, inAProject: false }, { direct: 50, inAProject: false }],
        ...[{ direct: null, inAProject: true }, { direct: null, inAProject: true }],
        ...[{ direct: null, inAProject: false }, { direct: null, inAProject: false }],
      ]);
    });
  });

  describe('applications', () => {
    it("creates applications, finds them by id and by exact App ID, lists an owner's oldest first, and refuses an App ID in use", async () => {
      const { storages: [storage] } = await subject();
      const owner = await storage.users.create(newUser('owner'));
      const other = await storage.users.create(newUser('other'));
      const first = await storage.applications.create(newApplication(owner.id, 'App-One'));
      expect(first).toEqual({ id: expect.any(Number), ...newApplication(owner.id, 'App-One') });
      const publicClient = await storage.applications.create(newApplication(owner.id, 'app-two', false));
      expect(publicClient).toEqual({ id: expect.any(Number), ...newApplication(owner.id, 'app-two', false) });
      const theirs = await storage.applications.create(newApplication(other.id, 'app-three'));
      expect(await storage.applications.byId(first.id)).toEqual(first);
      expect(await storage.applications.byUid('App-One')).toEqual(first);
      expect(await storage.applications.byUid('app-one')).toBeUndefined();
      expect(await storage.applications.byId(Number.NaN)).toBeUndefined();
      expect(await storage.applications.ownedBy(owner.id)).toEqual([first, publicClient]);
      expect(await storage.applications.ownedBy(other.id)).toEqual([theirs]);
      expect(await storage.applications.ownedBy(other.id + 1)).toEqual([]);
      expect(await refusal(storage.applications.create(newApplication(other.id, 'App-One')))).toEqual({ field: 'uid', code: 'taken', message: 'the App ID "App-One" is already taken' });
      expect(await storage.applications.ownedBy(other.id)).toEqual([theirs]);
    });

    it('lets two applications have the same secret (it identifies nothing)', async () => {
      const { storages: [storage] } = await subject();
      const owner = await storage.users.create(newUser('owner'));
      await storage.applications.create({ ...newApplication(owner.id, 'one'), secret_digest: 'same' });
      const second = await storage.applications.create({ ...newApplication(owner.id, 'two'), secret_digest: 'same' });
      expect(second.secret_digest).toBe('same');
    });

    it("deletes the owner's application with its codes, revokes its live tokens, and refuses anyone else", async () => {
      const { storages: [storage] } = await subject();
      const owner = await storage.users.create(newUser('owner'));
      const user = await storage.users.create(newUser('user'));
      const doomed = await storage.applications.create(newApplication(owner.id, 'doomed'));
      const kept = await storage.applications.create(newApplication(owner.id, 'kept'));
      await storage.codes.create(newCode('doomed-code', doomed.id, user.id));
      await storage.codes.create(newCode('kept-code', kept.id, user.id));
      await storage.tokens.issue(newPair('live', doomed.id, user.id));
      await storage.tokens.issue(newPair('revoked-before', doomed.id, owner.id));
      await storage.tokens.revoke('revoked-before', now - 50);
      await storage.tokens.issue(newPair('of-kept', kept.id, user.id));

      expect(await storage.applications.deleteOwned(user.id, doomed.id, now)).toBe(false);
      expect(await storage.applications.deleteOwned(owner.id, kept.id + 100, now)).toBe(false);
      expect(await storage.applications.deleteOwned(owner.id, Number.NaN, now)).toBe(false);
      expect(await storage.applications.byId(doomed.id)).toEqual(doomed);
      expect((await storage.tokens.byAccessDigest('access-live'))?.revoked_at).toBeNull();

      expect(await storage.applications.deleteOwned(owner.id, doomed.id, now)).toBe(true);
      expect(await storage.applications.byId(doomed.id)).toBeUndefined();
      expect(await storage.applications.byUid('doomed')).toBeUndefined();
      expect(await storage.applications.ownedBy(owner.id)).toEqual([kept]);
      expect((await storage.tokens.byAccessDigest('access-live'))?.revoked_at).toBe(now);
      expect((await storage.tokens.byAccessDigest('access-revoked-before'))?.revoked_at).toBe(now - 50);
      expect((await storage.tokens.byAccessDigest('access-of-kept'))?.revoked_at).toBeNull();
      expect(await redeem(storage, 'doomed-code', doomed.id)).toBe('unknown');
      expect(await redeem(storage, 'kept-code', kept.id)).toBe('issued');
      expect(await storage.applications.deleteOwned(owner.id, doomed.id, now)).toBe(false);
    });
  });

  describe('personal access tokens', () => {
    it("creates tokens, finds one by exact digest, lists a user's newest first, and refuses a digest in use", async () => {
      const { storages: [storage] } = await subject();
      const user = await storage.users.create(newUser('jsmith'));
      const other = await storage.users.create(newUser('other'));
      // East of UTC, a last day read through a local Date would come back as the day before.
      const zone = process.env.TZ;
      process.env.TZ = 'Pacific/Auckland';
      try {
        const expiring = await storage.personalAccessTokens.create(newToken(user.id, 'digest-1', '2030-12-31'));
        expect(expiring).toEqual({ id: expect.any(Number), ...newToken(user.id, 'digest-1', '2030-12-31') });
        const lasting = await storage.personalAccessTokens.create(newToken(user.id, 'digest-2'));
        expect(lasting).toEqual({ id: expect.any(Number), ...newToken(user.id, 'digest-2') });
        const theirs = await storage.personalAccessTokens.create(newToken(other.id, 'digest-3'));
        expect((await storage.personalAccessTokens.withUserByDigest('digest-1'))?.token).toEqual(expiring);
        expect(await storage.personalAccessTokens.withUserByDigest('DIGEST-1')).toBeUndefined();
        expect((await storage.personalAccessTokens.withUserByDigest('digest-3'))?.user.id).toBe(other.id);
        expect(await storage.personalAccessTokens.ofUser(user.id)).toEqual([lasting, expiring]);
        expect(await storage.personalAccessTokens.ofUser(other.id)).toEqual([theirs]);
        expect(await refusal(storage.personalAccessTokens.create(newToken(other.id, 'digest-1')))).toEqual({ field: 'token', code: 'taken', message: 'this token is already in use' });
        expect(await storage.personalAccessTokens.ofUser(other.id)).toEqual([theirs]);
      } finally {
        if (zone === undefined) delete process.env.TZ;
        else process.env.TZ = zone;
      }
    });

    it("revokes the user's own token, answering it as it now is, again as often as asked; null for anyone else's or none", async () => {
      const { storages: [storage] } = await subject();
      const user = await storage.users.create(newUser('jsmith'));
      const other = await storage.users.create(newUser('other'));
      const token = await storage.personalAccessTokens.create(newToken(user.id, 'digest-1'));
      expect(await storage.personalAccessTokens.revokeOwned(other.id, token.id)).toBeNull();
      expect(await storage.personalAccessTokens.revokeOwned(user.id, token.id + 1)).toBeNull();
      expect(await storage.personalAccessTokens.revokeOwned(user.id, Number.NaN)).toBeNull();
      expect((await storage.personalAccessTokens.withUserByDigest('digest-1'))?.token.revoked).toBe(false);
      expect(await storage.personalAccessTokens.revokeOwned(user.id, token.id)).toEqual({ ...token, revoked: true });
      expect(await storage.personalAccessTokens.revokeOwned(user.id, token.id)).toEqual({ ...token, revoked: true });
      expect((await storage.personalAccessTokens.withUserByDigest('digest-1'))?.token).toEqual({ ...token, revoked: true });
    });
  });

  describe('codes and tokens', () => {
    it('issues a pair outside any chain, finds it by either digest, revokes it once, and lists what a user holds unrevoked, oldest first', async () => {
      const { storages: [storage] } = await subject();
      const user = await storage.users.create(newUser('jsmith'));
      const other = await storage.users.create(newUser('other'));
      const app = await storage.applications.create(newApplication(user.id, 'app'));
      await storage.tokens.issue(newPair('first', app.id, user.id, now - 300));
      await storage.tokens.issue({ ...newPair('password', null, user.id, now - 200), refresh_digest: null });
      await storage.tokens.issue(newPair('theirs', app.id, other.id, now - 100));
      const first = {
        id: 'first',
        token_digest: 'access-first',
        refresh_digest: 'refresh-first',
        application_id: app.id,
        user_id: user.id,
        scopes: ['api'],
        created_at: now - 300,
        expires_in: 7200,
        revoked_at: null,
        code_id: null,
      };
      expect(await storage.tokens.byAccessDigest('access-first')).toEqual(first);
      expect(await storage.tokens.byRefreshDigest('refresh-first')).toEqual(first);
      expect(await storage.tokens.byAccessDigest('refresh-first')).toBeUndefined();
      expect(await storage.tokens.byRefreshDigest('access-first')).toBeUndefined();
      expect((await storage.tokens.unrevokedOfUser(user.id)).map((t) => t.id)).toEqual(['first', 'password']);
      await storage.tokens.revoke('first', now);
      await storage.tokens.revoke('first', now + 60);
      await storage.tokens.revoke('no-such-pair', now);
      expect(await storage.tokens.byAccessDigest('access-first')).toEqual({ ...first, revoked_at: now });
      expect(await storage.tokens.unrevokedOfUser(user.id)).toEqual([(await storage.tokens.byAccessDigest('access-password'))!]);
      expect((await storage.tokens.unrevokedOfUser(other.id)).map((t) => t.id)).toEqual(['theirs']);
    });

    it("answers an access token or a personal access token with its user's account: the user and their global setting once stored", async () => {
      const { storages: [storage] } = await subject();
      const user = await storage.users.create(newUser('jsmith'));
      const other = await storage.users.create(newUser('other'));
      await storage.tokens.issue(newPair('mine', null, user.id));
      await storage.personalAccessTokens.create(newToken(user.id, 'pat-mine'));
      const accountOf = async () => {
        const viaToken = await storage.tokens.withUserByAccessDigest('access-mine');
        const viaPat = await storage.personalAccessTokens.withUserByDigest('pat-mine');
        expect(viaToken?.token.id).toBe('mine');
        expect(viaPat?.token.token_digest).toBe('pat-mine');
        expect({ user: viaPat?.user, globalSetting: viaPat?.globalSetting }).toEqual({ user: viaToken?.user, globalSetting: viaToken?.globalSetting });
        return { user: viaToken!.user, globalSetting: viaToken!.globalSetting };
      };
      expect(await accountOf()).toEqual({ user, globalSetting: undefined });
      // Another user's global setting and the user's own project setting are not theirs to answer.
      await storage.notificationSettings.change(setting(other.id, 'global', null, 'watch'), { events: {} });
      await storage.notificationSettings.change(setting(user.id, 'project', 1, 'disabled'), { events: {} });
      expect(await accountOf()).toEqual({ user, globalSetting: undefined });
      const global = await storage.notificationSettings.change(setting(user.id, 'global', null, 'custom'), { notification_email: 'j@example.com', events: { failed_pipeline: true } });
      expect(await accountOf()).toEqual({ user, globalSetting: global });
      expect(global).toMatchObject({ level: 'custom', notification_email: 'j@example.com', events: { failed_pipeline: true } });
      expect(await storage.tokens.withUserByAccessDigest('access-nothing')).toBeUndefined();
    });

    it("revokes an application's authorization of a user, answering whether there was a live pair or a pending code", async () => {
      const { storages: [storage] } = await subject();
      const user = await storage.users.create(newUser('jsmith'));
      const other = await storage.users.create(newUser('other'));
      const [a, b, c, d] = await Promise.all(['a', 'b', 'c', 'd'].map((uid) => storage.applications.create(newApplication(other.id, uid))));
      expect(await storage.tokens.revokeAuthorization(user.id, a!.id, now)).toBe(false);

      await storage.tokens.issue(newPair('user-a', a!.id, user.id));
      await storage.tokens.issue(newPair('user-b', b!.id, user.id));
      await storage.tokens.issue(newPair('other-a', a!.id, other.id));
      await storage.tokens.issue(newPair('user-password', null, user.id));
      expect(await storage.tokens.revokeAuthorization(user.id, a!.id, now)).toBe(true);
      expect((await storage.tokens.unrevokedOfUser(user.id)).map((t) => t.id)).toEqual(['user-b', 'user-password']);
      expect((await storage.tokens.byAccessDigest('access-user-a'))?.revoked_at).toBe(now);
      expect((await storage.tokens.unrevokedOfUser(other.id)).map((t) => t.id)).toEqual(['other-a']);
      expect(await storage.tokens.revokeAuthorization(user.id, a!.id, now + 1)).toBe(false);
      expect((await storage.tokens.byAccessDigest('access-user-a'))?.revoked_at).toBe(now);

      // null: the password grant without a client, nothing else.
      expect(await storage.tokens.revokeAuthorization(user.id, null, now)).toBe(true);
      expect((await storage.tokens.unrevokedOfUser(user.id)).map((t) => t.id)).toEqual(['user-b']);
      expect(await storage.tokens.revokeAuthorization(user.id, null, now)).toBe(false);

      // A pending code alone counts, and is dropped.
      await storage.codes.create(newCode('pending', c!.id, user.id));
      await storage.codes.create(newCode('someone-elses', c!.id, other.id));
      expect(await storage.tokens.revokeAuthorization(user.id, c!.id, now)).toBe(true);
      expect(await storage.tokens.revokeAuthorization(user.id, c!.id, now)).toBe(false);
      expect(await redeem(storage, 'pending', c!.id)).toBe('unknown');
      expect(await redeem(storage, 'someone-elses', c!.id)).toBe('issued');

      // A used or expired code does not count, but is dropped all the same.
      await storage.codes.create(newCode('used', d!.id, user.id, { used_at: now - 10 }));
      await storage.codes.create(newCode('expired', d!.id, user.id, { expires_at: now }));
      expect(await storage.tokens.revokeAuthorization(user.id, d!.id, now)).toBe(false);
      expect(await redeem(storage, 'used', d!.id)).toBe('unknown');
      expect(await redeem(storage, 'expired', d!.id)).toBe('unknown');
      expect(await storage.tokens.revokeAuthorization(user.id, Number.NaN, now)).toBe(false);
    });
  });

  describe('recipients', () => {
    it("gathers a project's audience: members direct and through the group, users with a setting for either, and those asked for", async () => {
      const { storages: [storage] } = await subject();
      const names = ['member', 'groupie', 'watcher', 'groupwatcher', 'global', 'asked', 'elsewhere'] as const;
      const users = {} as Record<(typeof names)[number], UserRecord>;
      for (const n of names) users[n] = await storage.users.create(newUser(n));
      const acme = await storage.namespaces.createGroup(newGroup('acme'), [{ user_id: users.groupie.id, access_level: 40 }]);
      const widgets = await storage.namespaces.createProject(newProject('acme', 'widgets'), [{ user_id: users.member.id, access_level: 30 }]);
      const personal = await storage.namespaces.createProject(newProject('member', 'notes'), []);
      const put = (s: NotificationSettingRecord) => storage.notificationSettings.change(s, { events: {} });
      const memberGlobal = await put(setting(users.member.id, 'global', null, 'mention'));
      const watcherProject = await put(setting(users.watcher.id, 'project', widgets.id, 'watch'));
      const groupwatcherGroup = await put(setting(users.groupwatcher.id, 'group', acme.id, 'disabled'));
      const globalGlobal = await put(setting(users.global.id, 'global', null, 'participating'));
      const groupieProject = await put(setting(users.groupie.id, 'project', widgets.id, 'custom'));
      await put(setting(users.elsewhere.id, 'project', personal.id, 'watch'));
      await put(setting(users.watcher.id, 'project', personal.id, 'disabled'));

      const audience = (await storage.recipients.audience(widgets.id, [users.global.id, users.asked.id, users.member.id, 9999]))!;
      expect(withoutMembers(audience.project)).toEqual(withoutMembers(widgets));
      const ids = (list: Iterable<number>) => [...list].sort((x, y) => x - y);
      expect(ids(audience.interested)).toEqual(ids([users.member.id, users.groupie.id, users.watcher.id, users.groupwatcher.id]));
      expect(ids(audience.members.keys())).toEqual(ids([users.member.id, users.groupie.id, users.watcher.id, users.groupwatcher.id, users.global.id, users.asked.id]));
      const none = { direct: null, inherited: null };
      expect(audience.members.get(users.member.id)).toEqual({ user: users.member, access: { direct: 30, inherited: null }, settings: { global: memberGlobal } });
      expect(audience.members.get(users.groupie.id)).toEqual({ user: users.groupie, access: { direct: null, inherited: 40 }, settings: { project: groupieProject } });
      expect(audience.members.get(users.watcher.id)).toEqual({ user: users.watcher, access: none, settings: { project: watcherProject } });
      expect(audience.members.get(users.groupwatcher.id)).toEqual({ user: users.groupwatcher, access: none, settings: { group: groupwatcherGroup } });
      expect(audience.members.get(users.global.id)).toEqual({ user: users.global, access: none, settings: { global: globalGlobal } });
      expect(audience.members.get(users.asked.id)).toEqual({ user: users.asked, access: none, settings: {} });

      // A project in a user's namespace has no group, so group settings play no part.
      const ofPersonal = (await storage.recipients.audience(personal.id, [users.groupwatcher.id]))!;
      expect(ids(ofPersonal.interested)).toEqual(ids([users.elsewhere.id, users.watcher.id]));
      expect(ids(ofPersonal.members.keys())).toEqual(ids([users.elsewhere.id, users.watcher.id, users.groupwatcher.id]));
      expect(ofPersonal.members.get(users.groupwatcher.id)?.settings).toEqual({});
      expect(ofPersonal.members.get(users.watcher.id)?.settings).toEqual({ project: setting(users.watcher.id, 'project', personal.id, 'disabled') });

      expect(await storage.recipients.audience(personal.id + 100, [users.member.id])).toBeUndefined();
      expect(await storage.recipients.audience(Number.NaN, [])).toBeUndefined();
    });
  });

  describe('maintenance', () => {
    it('prunes notification mail sent or failed before the retention, keeps what is queued and what is recent, and events while a message of theirs stays', async () => {
      const { storages: [storage] } = await subject();
      const user = await storage.users.create(newUser('jsmith'));
      const project = await storage.namespaces.createProject(newProject('jsmith', 'notes'), []);
      const message = (id: string, eventId: string, createdAt: number) => ({
        id,
        event_id: eventId,
        user_id: user.id,
        to: 'jsmith@example.com',
        subject: `subject ${id}`,
        text: 'text',
        headers: { 'X-GitLab-NotificationReason': 'participating' },
        next_attempt_at: createdAt,
        created_at: createdAt,
      });
      const event = (id: string, createdAt: number) => ({ id, kind: 'new_issue' as const, project_id: project.id, author_id: user.id, title: id, created_at: createdAt });
      const old = now - 8 * day;
      await storage.mail.recordEvent(event('old-done', old), [message('sent-old', 'old-done', old), message('failed-old', 'old-done', old)]);
      await storage.mail.recordEvent(event('old-mixed', old), [message('sent-old-2', 'old-mixed', old), message('queued-old', 'old-mixed', old)]);
      await storage.mail.recordEvent(event('recent', now - day), [message('sent-recent', 'recent', now - day)]);
      for (const id of ['sent-old', 'sent-old-2', 'sent-recent']) await storage.mail.markSent(id, now - day);
      await storage.mail.markFailed('failed-old', 'refused: 550');

      expect(await storage.maintenance.prune(now)).toEqual({ authorizationCodes: 0, accessTokens: 0, sessions: 0, notificationMessages: 3 });
      expect((await storage.mail.recent({ limit: 10 })).map((m) => m.id).sort()).toEqual(['queued-old', 'sent-recent']);
      // The event whose messages are all gone goes too; the one with a message still queued stays.
      expect(await storage.mail.recent({ limit: 10, eventId: 'old-done' })).toEqual([]);
      expect((await storage.mail.recent({ limit: 10, eventId: 'old-mixed' })).map((m) => m.id)).toEqual(['queued-old']);
      expect(await storage.maintenance.prune(now)).toMatchObject({ notificationMessages: 0 });
    });


    it('finds which names it has, whatever their case (App IDs and digests exactly), mapped to their stored spelling', async () => {
      const { storages: [storage] } = await subject();
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
        clientIds: new Map([['app-one', 'App-One']]),
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
      const { storages: [storage] } = await subject();
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
      const { storages: [storage] } = await subject();
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
      const { storages, described } = await subject();
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
      expect(await storage.maintenance.prune(now)).toEqual({ authorizationCodes: 0, accessTokens: 1, sessions: 0, notificationMessages: 0 });
      expect(await storage.tokens.byAccessDigest('access-old')).toBeUndefined();
      expect(await storage.tokens.byAccessDigest('access-recent')).toBeDefined();

      expect(await storage.maintenance.readiness()).toEqual({ ready: true });
      expect(storage.maintenance.describe()).toBe(described);
    });

    it('is not ready once closed, and closing twice is harmless', async () => {
      const closable = await (await subject()).closable();
      expect(await closable.maintenance.readiness()).toEqual({ ready: true });
      await closable.maintenance.close();
      await closable.maintenance.close();
      expect(await closable.maintenance.readiness()).toMatchObject({ ready: false, problem: expect.any(String) });
    });
  });
});

describe('storage on PostgreSQL from two instances at once', () => {
  async function instances(): Promise<[Storage, Storage]> {
    const { pools, close } = await migratedDatabase(inject('postgresUrl'), 2);
    cleanups.push(close);
    return [postgresStorage(pools[0]!), postgresStorage(pools[1]!)];
  }
  const outcomes = (results: PromiseSettledResult<unknown>[]) => ({
    won: results.filter((r) => r.status === 'fulfilled').length,
    refused: results.flatMap((r) => (r.status === 'rejected' ? [r.reason instanceof InputError ? `${r.reason.field} ${r.reason.code}` : String(r.reason)] : [])),
  });

  it('lets one of ten creations of one username win, and refuses the other nine as taken', async () => {
    const both = await instances();
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => both[i % 2]!.users.create(newUser(i % 2 ? 'racer' : 'RACER', { email: `racer${i}@example.com` }))));
    expect(outcomes(results)).toEqual({ won: 1, refused: Array(9).fill('username taken') });
    expect(await both[0].maintenance.existingNames({ usernames: ['racer'], emails: [], groupPaths: [], projectPaths: [], clientIds: [], tokenDigests: [] })).toMatchObject({ usernames: new Map([['racer', expect.any(String)]]) });
  });

  it('gives one address to one of ten users created at once, whether they ask for it as their primary or a secondary one', async () => {
    const both = await instances();
    const racer = (i: number) => (i % 2 ? newUser(`racer${i}`, { email: 'Shared@example.com' }) : newUser(`racer${i}`, { secondary_emails: ['SHARED@example.com'] }));
    const { won, refused } = outcomes(await Promise.allSettled(Array.from({ length: 10 }, (_, i) => both[i % 2]!.users.create(racer(i)))));
    expect(won).toBe(1);
    expect(refused).toHaveLength(9);
    for (const reason of refused) expect(reason).toMatch(/^(email|secondary_emails) taken$/);
  });

  it('refuses an address in use in the database itself, whoever writes it, and follows a primary address changed there', async () => {
    const { pools, close } = await migratedDatabase(inject('postgresUrl'), 1);
    cleanups.push(close);
    const pool = pools[0]!;
    const storage = postgresStorage(pool);
    const jsmith = await storage.users.create(newUser('jsmith', { secondary_emails: ['Jane@Work.example'] }));
    const other = await storage.users.create(newUser('other'));
    const outcome = (sql: string, values: unknown[] = []) => pool.query(sql, values).then(() => 'accepted', (error: { code?: string }) => error.code);
    const secondary = (user: number, position: number, email: string) => outcome('INSERT INTO user_emails (user_id, position, email) VALUES ($1, $2, $3)', [user, position, email]);
    const UNIQUE_VIOLATION = '23505';
    expect(await secondary(other.id, 1, 'JANE@work.example')).toBe(UNIQUE_VIOLATION);
    expect(await secondary(other.id, 1, 'JSMITH@example.com')).toBe(UNIQUE_VIOLATION);
    expect(await outcome(`INSERT INTO users (username, email, name, password_hash) VALUES ('third', 'jane@WORK.example', 'Third', 'x')`)).toBe(UNIQUE_VIOLATION);
    expect(await outcome('UPDATE users SET email = $2 WHERE id = $1', [other.id, 'jane@work.EXAMPLE'])).toBe(UNIQUE_VIOLATION);
    expect(await outcome('UPDATE users SET email = $2 WHERE id = $1', [other.id, 'other@new.example'])).toBe('accepted');
    expect(await secondary(jsmith.id, 2, 'Other@New.example')).toBe(UNIQUE_VIOLATION);
    expect(await secondary(jsmith.id, 2, 'other@example.com')).toBe('accepted');
    expect((await storage.users.byId(jsmith.id))?.secondary_emails).toEqual(['Jane@Work.example', 'other@example.com']);
  });

  it('lets one of ten creations of one group path win', async () => {
    const both = await instances();
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => both[i % 2]!.namespaces.createGroup(newGroup(i % 2 ? 'crew' : 'CREW'), [])));
    expect(outcomes(results)).toEqual({ won: 1, refused: Array(9).fill('path taken') });
  });

  it('lets either a user or a group of one name win when both are created at once, never both', async () => {
    const [a, b] = await instances();
    for (let round = 0; round < 20; round++) {
      const name = `clash${round}`;
      const [user, group] = round % 2 ? [a, b] : [b, a];
      const results = await Promise.allSettled([user.users.create(newUser(name)), group.namespaces.createGroup(newGroup(name.toUpperCase()), [])]);
      const { won, refused } = outcomes(results);
      expect({ round, won, refused }).toEqual({ round, won: 1, refused: [expect.stringMatching(/^(username|path) taken$/)] });
      expect([await a.users.byUsername(name), await a.namespaces.groupByPath(name)].filter(Boolean)).toHaveLength(1);
    }
  });

  it('spends one TOTP step once when ten sign-ins try it at once', async () => {
    const both = await instances();
    const user = await both[0].users.create(newUser('jsmith', { two_factor_enabled: true, otp_secret: 'JBSWY3DPEHPK3PXP' }));
    const spent = await Promise.all(Array.from({ length: 10 }, (_, i) => both[i % 2]!.users.spendOtpStep(user.id, 1000)));
    expect(spent.filter(Boolean)).toHaveLength(1);
    expect((await both[1].users.byId(user.id))?.otp_last_step).toBe(1000);
  });

  it('names what is wrong when the database cannot be reached, without its credentials, and says what it was told to', async () => {
    const pool = new pg.Pool({ connectionString: 'postgres://tokenbell:hunter2-secret@127.0.0.1:1/tokenbell', connectionTimeoutMillis: 5000 });
    const storage = postgresStorage(pool, { describe: 'PostgreSQL at 127.0.0.1:1/tokenbell' });
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
