// The users' port (domain/storage/users.ts) on every backend (backends.ts): creating a user, finding one by id,
// username or login, the names and addresses no two users share, and what sign-in spends; and on PostgreSQL from two
// instances at once, where two creations of one name, or two sign-ins with one step, race.
import { describe, expect, it } from 'vitest';
import type { NewUserRow, NotificationSettingRecord } from '../../src/domain/storage/index.js';
import { everyBackend, newApplication, newGroup, newPair, newProject, newToken, newUser, now, outcomes, refusal, setting, useBackends } from './backends.js';

const { open, postgres, instances } = useBackends();

describe.each(everyBackend)('users on %s', (name) => {
  it('creates a user, then finds it by id, by username and by login (username or e-mail address), whatever the case', async () => {
    const { storages: [storage] } = await open(name);
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

  it('finds no user by a name with half of a surrogate pair, not even one with U+FFFD where the half stands', async () => {
    const { storages: [storage] } = await open(name);
    // UTF-8 has no encoding for the half: PostgreSQL would be sent U+FFFD in its place, and find this user.
    const replaced = await storage.users.create(newUser('jsm\ufffdith', { email: 'replaced@example.com' }));
    expect(await storage.users.byUsername('jsm\ud800ith')).toBeUndefined();
    expect(await storage.users.byLogin('jsm\udfffith')).toBeUndefined();
    expect(await storage.users.byUsername('jsm\ufffdith')).toEqual(replaced);
  });

  it('replaces a password hash only while it is still the one verified, and says whether it did', async () => {
    const { storages: [storage, other = storage] } = await open(name);
    const jsmith = await storage.users.create(newUser('jsmith', { password_hash: 'scrypt$verified' }));
    expect(await storage.users.replaceVerifiedPasswordHash(jsmith.id, 'scrypt$verified', 'scrypt$rehashed')).toBe(true);
    expect((await other.users.byId(jsmith.id))?.password_hash).toBe('scrypt$rehashed');
    // A second sign-in that verified the old hash, or a reset meanwhile: the stored hash stays.
    expect(await other.users.replaceVerifiedPasswordHash(jsmith.id, 'scrypt$verified', 'scrypt$rehashed-again')).toBe(false);
    await storage.users.setPasswordHash(jsmith.id, 'scrypt$reset');
    expect(await storage.users.replaceVerifiedPasswordHash(jsmith.id, 'scrypt$rehashed', 'scrypt$late')).toBe(false);
    expect((await storage.users.byId(jsmith.id))?.password_hash).toBe('scrypt$reset');
    expect(await storage.users.replaceVerifiedPasswordHash(jsmith.id + 1, 'scrypt$reset', 'scrypt$nobody')).toBe(false);
    expect(await storage.users.replaceVerifiedPasswordHash(Number.NaN, 'scrypt$reset', 'scrypt$nobody')).toBe(false);
  });

  it("answers the user whose username is the login before one whose e-mail address is; ids grow", async () => {
    const { storages: [storage] } = await open(name);
    const byMail = await storage.users.create(newUser('first', { email: 'Carol' }));
    const carol = await storage.users.create(newUser('carol'));
    expect(carol.id).toBeGreaterThan(byMail.id);
    expect((await storage.users.byLogin('CAROL'))?.id).toBe(carol.id);
  });

  it("refuses a username or e-mail address in use, whatever the case, and a username that is a group's path", async () => {
    const { storages: [storage] } = await open(name);
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
    const { storages: [storage] } = await open(name);
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
    const { storages: [storage] } = await open(name);
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
    const { storages: [storage] } = await open(name);
    const user = await storage.users.create(newUser('jsmith'));
    const changed = await storage.users.setPasswordHash(user.id, 'scrypt$new');
    expect(changed).toEqual({ ...user, password_hash: 'scrypt$new' });
    expect(await storage.users.byId(user.id)).toEqual(changed);
    expect(await storage.users.setPasswordHash(user.id + 1, 'scrypt$x')).toBeUndefined();
  });

  it('spends each TOTP step once, and only a later one after it; never for a blocked or unknown user', async () => {
    const { storages: [storage] } = await open(name);
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

describe('users on PostgreSQL from two instances at once', () => {
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
    const { pools, storages } = await postgres(1);
    const pool = pools[0]!;
    const storage = storages[0]!;
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

  it('spends one TOTP step once when ten sign-ins try it at once', async () => {
    const both = await instances();
    const user = await both[0].users.create(newUser('jsmith', { two_factor_enabled: true, otp_secret: 'JBSWY3DPEHPK3PXP' }));
    const spent = await Promise.all(Array.from({ length: 10 }, (_, i) => both[i % 2]!.users.spendOtpStep(user.id, 1000)));
    expect(spent.filter(Boolean)).toHaveLength(1);
    expect((await both[1].users.byId(user.id))?.otp_last_step).toBe(1000);
  });
});

describe.each(everyBackend)('deleting a user on %s', (name) => {
  // What the delete takes is the same set on both stores: the file store's by hand, PostgreSQL's by its foreign keys.
  it('takes everything theirs, revokes what others hold from their applications, leaves the rest; not while they own a group alone', async () => {
    const { storages: [storage] } = await open(name);
    const carol = await storage.users.create(newUser('carol'));
    const dan = await storage.users.create(newUser('dan'));
    const team = await storage.namespaces.createGroup(newGroup('team'), [{ user_id: carol.id, access_level: 50 }, { user_id: dan.id, access_level: 30 }]);
    const shared = await storage.namespaces.createProject(newProject('team', 'shared'), [{ user_id: carol.id, access_level: 40 }]);
    const personal = await storage.namespaces.createProject(newProject('carol', 'notes'), [{ user_id: dan.id, access_level: 20 }]);
    const app = await storage.applications.create(newApplication(carol.id, 'carols-app'));
    await storage.personalAccessTokens.create(newToken(carol.id, 'carol-pat'));
    await storage.personalAccessTokens.create(newToken(dan.id, 'dan-pat'));
    await storage.tokens.issue(newPair('carols-own', null, carol.id));
    await storage.tokens.issue(newPair('dans-from-carols-app', app.id, dan.id));
    await storage.tokens.issue(newPair('dans-own', null, dan.id));
    const put = (s: NotificationSettingRecord) => storage.notificationSettings.change(s, { events: {} });
    await put(setting(carol.id, 'global', null, 'watch'));
    await put(setting(dan.id, 'project', personal.id, 'watch'));
    await put(setting(dan.id, 'project', shared.id, 'watch'));
    const message = (id: string, eventId: string, userId: number) => ({
      id, event_id: eventId, user_id: userId, to: `${userId}@example.com`, subject: id, text: 'text', headers: {}, next_attempt_at: now, created_at: now,
    });
    const event = (id: string, projectId: number, authorId: number) => ({ id, kind: 'new_issue' as const, project_id: projectId, author_id: authorId, title: id, created_at: now });
    await storage.mail.recordEvent(event('by-carol', shared.id, carol.id), [message('to-dan-by-carol', 'by-carol', dan.id)]);
    await storage.mail.recordEvent(event('by-dan', shared.id, dan.id), [message('to-carol', 'by-dan', carol.id), message('to-dan', 'by-dan', dan.id)]);

    expect(await storage.users.delete(carol.id, now)).toEqual({ deleted: false, soleOwnerOf: ['team'] });
    expect(await storage.users.byId(carol.id)).toEqual(carol);
    await storage.namespaces.setMembership({ groupId: team.id }, dan.id, 50);
    expect(await storage.users.delete(carol.id, now)).toEqual({ deleted: true });
    expect(await storage.users.delete(carol.id, now)).toBeUndefined();

    expect(await storage.users.all()).toEqual([dan]);
    expect(await storage.applications.byUid('carols-app')).toBeUndefined();
    expect(await storage.personalAccessTokens.withUserByDigest('carol-pat')).toBeUndefined();
    expect(await storage.tokens.byAccessDigest('access-carols-own')).toBeUndefined();
    expect((await storage.tokens.byAccessDigest('access-dans-from-carols-app'))?.revoked_at).toBe(now);
    expect((await storage.tokens.byAccessDigest('access-dans-own'))?.revoked_at).toBeNull();
    expect(await storage.personalAccessTokens.withUserByDigest('dan-pat')).toBeDefined();
    expect(await storage.namespaces.projectByFullPath('carol/notes')).toBeUndefined();
    expect(await storage.namespaces.groupAccess(carol.id, team)).toEqual({ direct: null, inAProject: false });
    expect(await storage.namespaces.groupAccess(dan.id, team)).toEqual({ direct: 50, inAProject: false });
    expect((await storage.namespaces.projectAccess(carol.id, shared)).direct).toBeNull();
    expect(await storage.notificationSettings.find({ user_id: carol.id, source_type: 'global', source_id: null })).toBeUndefined();
    expect(await storage.notificationSettings.find({ user_id: dan.id, source_type: 'project', source_id: personal.id })).toBeUndefined();
    expect(await storage.notificationSettings.find({ user_id: dan.id, source_type: 'project', source_id: shared.id })).toBeDefined();
    // Mail to them and about what they did goes; the rest stays.
    expect((await storage.mail.recent({ limit: 10 })).map((m) => m.id)).toEqual(['to-dan']);
  });
});
