import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  authenticate,
  createUser,
  createPersonalAccessToken,
  findActivePersonalAccessToken,
  listPersonalAccessTokens,
  newUserRow,
  revokePersonalAccessToken,
  type NewUser,
} from '../../src/domain/accounts.js';
import { InputError } from '../../src/explained-error.js';
import { cheapHashing, hashPassword, verifyPassword } from '../../src/domain/passwords.js';
import { openStore, type Store } from '../../src/store/file/store.js';
import { fileStorage } from '../../src/store/file/storage.js';
import type { Storage } from '../../src/domain/storage/index.js';
import type { UserRecord } from '../../src/domain/storage/records.js';

let store: Store;
let storage: Storage;
beforeEach(async () => {
  store = await openStore({ file: null });
  storage = fileStorage(store);
});
afterEach(() => store.close());

const jane = { username: 'JSmith', email: 'Jane@Example.com', name: 'Jane Smith', password: 'correct-horse-battery' };

/** A user without spending a scrypt hash, for tests that are not about passwords. */
function quickUser(username: string): Promise<UserRecord> {
  return storage.users.create(newUserRow({ username, email: `${username}@example.com`, name: username }, 'scrypt$16384$8$1$AAAA$AAAA'));
}

describe('createUser', () => {
  it('stores the user with a hash, never the password', async () => {
    const user = await createUser(storage, { ...jane, two_factor_enabled: true });
    expect(user).toMatchObject({ id: 1, username: 'JSmith', state: 'active', two_factor_enabled: true, is_admin: false });
    expect(user.password_hash.startsWith('scrypt$')).toBe(true);
    expect(JSON.stringify(store.data)).not.toContain(jane.password);
  });

  it('rejects bad fields with a typed error naming the field', async () => {
    const cases: Array<[Partial<NewUser>, string]> = [
      [{ otp_secret: 'KRUGKIDROVUWG2ZAMJZG653OEBTG66BA' }, 'otp_secret'],
      [{ two_factor_enabled: true, otp_secret: 'not base32!' }, 'otp_secret'],
      [{ two_factor_enabled: true, otp_secret: 'ABCDEFGH' }, 'otp_secret'],
      [{ username: '.dot' }, 'username'],
      [{ username: 'has space' }, 'username'],
      [{ username: 'x'.repeat(256) }, 'username'],
      [{ email: 'not-an-address' }, 'email'],
      [{ email: 'a@b' }, 'email'],
      [{ name: '   ' }, 'name'],
    ];
    for (const [change, field] of cases) {
      const error = await createUser(storage, { ...jane, ...change }).catch((e: unknown) => e);
      expect(error, JSON.stringify(change)).toBeInstanceOf(InputError);
      expect((error as InputError).field).toBe(field);
    }
    await expect(createUser(storage, { ...jane, password: 'short' })).rejects.toMatchObject({ field: 'password', code: 'invalid' });
    expect(store.data.users).toEqual([]);
  });

  it('refuses a taken username or e-mail address whatever the case', async () => {
    await quickUser('jsmith');
    await expect(createUser(storage, { ...jane, email: 'other@example.com' })).rejects.toMatchObject({
      field: 'username',
      code: 'taken',
      message: expect.stringMatching(/already taken/),
    });
    await expect(createUser(storage, { ...jane, username: 'other', email: 'JSMITH@example.com' })).rejects.toMatchObject({
      field: 'email',
      code: 'taken',
      message: expect.stringMatching(/already in use/),
    });
    expect(store.data.users).toHaveLength(1);
  });
});

describe('sign-in', () => {
  it('finds a user by username or e-mail address, whatever the case', async () => {
    const user = await quickUser('awong');
    expect(await storage.users.byLogin('AWONG')).toBe(user);
    expect(await storage.users.byLogin('awong@EXAMPLE.com')).toBe(user);
    expect(await storage.users.byLogin('nobody')).toBeUndefined();
  });

  it('authenticate: the user for the right password, null alike for unknown, wrong or blocked', async () => {
    const user = await createUser(storage, jane);
    const [byName, byEmail, wrong, unknown] = await Promise.all([
      await authenticate(storage, 'jsmith', jane.password),
      await authenticate(storage, 'jane@example.com', jane.password),
      await authenticate(storage, 'jsmith', 'wrong-password'),
      await authenticate(storage, 'nobody', jane.password),
    ]);
    expect(byName).toBe(user);
    expect(byEmail).toBe(user);
    expect(wrong).toBeNull();
    expect(unknown).toBeNull();
    await store.commit(() => store.update('users', user, { state: 'blocked' }));
    expect(await authenticate(storage, 'jsmith', jane.password)).toBeNull();
  });

  it('authenticate: a hash below the production parameters is replaced at the right password, and only then', async () => {
    const cheap = await hashPassword(jane.password, cheapHashing);
    const user = await storage.users.create(newUserRow(jane, cheap));
    expect(await authenticate(storage, 'jsmith', 'wrong-password')).toBeNull();
    expect((await storage.users.byId(user.id))?.password_hash).toBe(cheap);

    const signedIn = await authenticate(storage, 'jsmith', jane.password);
    const stored = (await storage.users.byId(user.id))!.password_hash;
    expect(stored).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(signedIn?.password_hash).toBe(stored);
    expect(await verifyPassword(jane.password, stored)).toBe(true);
    // Already production's: the next sign-in leaves it be.
    await authenticate(storage, 'jsmith', jane.password);
    expect((await storage.users.byId(user.id))?.password_hash).toBe(stored);
  });

  it('authenticate: a rehash never overwrites a password set while it was being computed', async () => {
    const user = await storage.users.create(newUserRow(jane, await hashPassword(jane.password, cheapHashing)));
    const resetHash = await hashPassword('a-new-password-entirely');
    // The sign-in has read the user (the memory store answers at once); the reset lands while it verifies and rehashes.
    const signingIn = authenticate(storage, 'jsmith', jane.password);
    await storage.users.setPasswordHash(user.id, resetHash);
    expect(await signingIn).toMatchObject({ id: user.id });
    expect((await storage.users.byId(user.id))?.password_hash).toBe(resetHash);
  });
});

describe('personal access tokens', () => {
  it('create: the token once, only its digest stored', async () => {
    const user = await quickUser('jsmith');
    const { record, token } = await createPersonalAccessToken(storage, user.id, { name: 'laptop', scopes: ['read_api'] });
    expect(token.startsWith('tbpat-')).toBe(true);
    expect(record).toMatchObject({ id: 1, user_id: user.id, name: 'laptop', scopes: ['read_api'], expires_at: null, revoked: false });
    expect(JSON.stringify(store.data)).not.toContain(token);
    expect((await findActivePersonalAccessToken(storage, token))?.record).toBe(record);
    expect(await findActivePersonalAccessToken(storage, `${token}x`)).toBeNull();
    expect(await listPersonalAccessTokens(storage, user.id)).toEqual([record]);
  });

  it('a given token (seeds) and default scopes', async () => {
    const user = await quickUser('jsmith');
    const given = 'tbpat-fixed-token-for-tests-0000000000';
    const { record, token } = await createPersonalAccessToken(storage, user.id, { name: 'ci', token: given });
    expect(token).toBe(given);
    expect(record.scopes).toEqual(['api']);
    await expect(createPersonalAccessToken(storage, user.id, { name: 'again', token: given })).rejects.toThrow(/in use/);
  });

  it("carries the service's token scopes; sudo, admin_mode and read_service_ping only for an administrator", async () => {
    const user = await quickUser('jsmith');
    const git = await createPersonalAccessToken(storage, user.id, { name: 'git', scopes: ['read_repository', 'write_repository', 'k8s_proxy'] });
    expect(git.record.scopes).toEqual(['read_repository', 'write_repository', 'k8s_proxy']);
    for (const scope of ['sudo', 'admin_mode', 'read_service_ping'] as const) {
      await expect(createPersonalAccessToken(storage, user.id, { name: 'x', scopes: ['api', scope] })).rejects.toThrow(new RegExp(`${scope} may be given only to an administrator`));
    }
    await expect(createPersonalAccessToken(storage, user.id, { name: 'x', scopes: ['openid' as never] })).rejects.toThrow(/unknown scope "openid"/);
    const admin = await storage.users.create({ ...newUserRow({ username: 'root', email: 'root@example.com', name: 'Root' }, 'scrypt$16384$8$1$AAAA$AAAA'), is_admin: true });
    const sudo = await createPersonalAccessToken(storage, admin.id, { name: 'sudo', scopes: ['api', 'sudo', 'admin_mode'] });
    expect(sudo.record.scopes).toEqual(['api', 'sudo', 'admin_mode']);
  });

  it('expires at the end (UTC) of its last day', async () => {
    const user = await quickUser('jsmith');
    const { token } = await createPersonalAccessToken(storage, user.id, { name: 'short', expires_at: '2030-01-31' });
    expect(await findActivePersonalAccessToken(storage, token, new Date('2030-01-31T23:59:59.999Z'))).not.toBeNull();
    expect(await findActivePersonalAccessToken(storage, token, new Date('2030-02-01T00:00:00.000Z'))).toBeNull();
  });

  it('revoked: no longer found; only its owner may revoke it', async () => {
    const owner = await quickUser('jsmith');
    const other = await quickUser('mallory');
    const { record, token } = await createPersonalAccessToken(storage, owner.id, { name: 'laptop' });
    expect(await revokePersonalAccessToken(storage, other.id, record.id)).toBeNull();
    expect(await findActivePersonalAccessToken(storage, token)).not.toBeNull();
    expect(await revokePersonalAccessToken(storage, owner.id, record.id)).toMatchObject({ revoked: true });
    expect(await findActivePersonalAccessToken(storage, token)).toBeNull();
    expect(await revokePersonalAccessToken(storage, owner.id, 999)).toBeNull();
  });

  it('stops working when its user is blocked', async () => {
    const user = await quickUser('jsmith');
    const { token } = await createPersonalAccessToken(storage, user.id, { name: 'laptop' });
    await store.commit(() => store.update('users', user, { state: 'blocked' }));
    expect(await findActivePersonalAccessToken(storage, token)).toBeNull();
  });

  it('rejects bad fields', async () => {
    const user = await quickUser('jsmith');
    const bad: Array<[Parameters<typeof createPersonalAccessToken>[2], string]> = [
      [{ name: '' }, 'name'],
      [{ name: 'x', scopes: [] }, 'scopes'],
      [{ name: 'x', scopes: ['admin' as never] }, 'scopes'],
      [{ name: 'x', expires_at: '2030-02-30' }, 'expires_at'],
      [{ name: 'x', expires_at: '31/12/2030' }, 'expires_at'],
      [{ name: 'x', token: 'short' }, 'token'],
    ];
    for (const [input, field] of bad) {
      await expect(createPersonalAccessToken(storage, user.id, input), JSON.stringify(input)).rejects.toMatchObject({ field });
    }
    await expect(createPersonalAccessToken(storage, 999, { name: 'x' })).rejects.toMatchObject({ field: 'user_id', code: 'unknown' });
    expect(store.data.personal_access_tokens).toEqual([]);
  });
});
