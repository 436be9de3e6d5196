import { InputError } from '../../src/explained-error.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newUserRow } from '../../src/domain/accounts.js';
import {
  authenticateClient,
  deleteApplication,
  findApplicationByUid,
  listApplications,
  registerApplication,
  type NewApplication,
} from '../../src/domain/applications.js';
import { openStore, type Store } from '../../src/store/file/store.js';
import { fileStorage } from '../../src/store/file/storage.js';
import type { Storage } from '../../src/domain/storage/index.js';

let store: Store;
let storage: Storage;
let ownerId: number;
let otherId: number;
beforeEach(async () => {
  store = await openStore({ file: null });
  storage = fileStorage(store);
  [ownerId, otherId] = await Promise.all(['jsmith', 'mallory'].map(async (username) => (await storage.users.create(newUserRow({ username, email: `${username}@example.com`, name: username }, 'scrypt$x'))).id)) as [number, number];
});
afterEach(() => store.close());

const app: NewApplication & { confidential?: true } = { name: 'Example App', redirect_uris: ['https://app.example.com/callback'], scopes: ['api', 'read_user'] };

describe('registerApplication', () => {
  it('answers the secret once and stores its digest', async () => {
    const { record, secret } = await registerApplication(storage, ownerId, app);
    expect(secret.startsWith('tbcs_')).toBe(true);
    expect(record.uid).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(record).toMatchObject({ id: 1, name: 'Example App', owner_id: ownerId, scopes: ['api', 'read_user'] });
    expect(JSON.stringify(store.data)).not.toContain(secret);
    expect(await findApplicationByUid(storage, record.uid)).toBe(record);
    expect(await findApplicationByUid(storage, 'unknown')).toBeNull();
  });

  it('defaults scopes to api and accepts a native app scheme and a fixed App ID and secret', async () => {
    const { record, secret } = await registerApplication(storage, ownerId, {
      name: 'Phone',
      redirect_uris: ['com.example.app:/oauth2redirect', 'http://127.0.0.1:8080/callback'],
      uid: 'fixed-client-id',
      secret: 'tbcs_fixed-secret-0000',
    });
    expect(record.scopes).toEqual(['api']);
    expect(record.uid).toBe('fixed-client-id');
    expect(secret).toBe('tbcs_fixed-secret-0000');
    await expect(registerApplication(storage, ownerId, { ...app, uid: 'fixed-client-id' })).rejects.toThrow(/already taken/);
  });

  it('rejects bad fields with a clear message naming the field', async () => {
    const cases: Array<[Partial<NewApplication>, string, RegExp]> = [
      [{ name: '  ' }, 'name', /blank/],
      [{ name: 'x'.repeat(256) }, 'name', /255/],
      [{ redirect_uris: 'https://app.example.com/callback' as unknown as string[] }, 'redirect_uris', /a list/],
      [{ redirect_uris: ['/relative/callback'] }, 'redirect_uris', /absolute/],
      [{ redirect_uris: ['https://app.example.com/cb#frag'] }, 'redirect_uris', /fragment/],
      [{ redirect_uris: ['https://app.example.com/cb#'] }, 'redirect_uris', /fragment/],
      [{ redirect_uris: ['javascript:alert(1)'] }, 'redirect_uris', /forbidden scheme/],
      [{ redirect_uris: ['https://app.example.com/a b'] }, 'redirect_uris', /white space/],
      [{ redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example.com/${i}`) }, 'redirect_uris', /at most 10/],
      [{ scopes: [] }, 'scopes', /at least one/],
      [{ scopes: ['write_api' as never] }, 'scopes', /unknown scope "write_api"/],
    ];
    for (const [change, field, message] of cases) {
      const error = await registerApplication(storage, ownerId, { ...app, ...change }).catch((e: unknown) => e);
      expect(error, JSON.stringify(change)).toBeInstanceOf(InputError);
      expect(error).toMatchObject({ field });
      expect((error as Error).message).toMatch(message);
    }
    expect(store.data.applications).toEqual([]);
  });
});

describe('authenticateClient', () => {
  it('accepts the right secret only', async () => {
    const { record, secret } = await registerApplication(storage, ownerId, app);
    expect(await authenticateClient(storage, record.uid, secret)).toBe(record);
    expect(await authenticateClient(storage, record.uid, `${secret}x`)).toBeNull();
    expect(await authenticateClient(storage, record.uid, '')).toBeNull();
    expect(await authenticateClient(storage, 'unknown', secret)).toBeNull();
  });
});

describe('listing and deleting', () => {
  it('lists the owner’s applications only', async () => {
    const mine = (await registerApplication(storage, ownerId, app)).record;
    await registerApplication(storage, otherId, app);
    expect(await listApplications(storage, ownerId)).toEqual([mine]);
  });

  it('deletes the application and its codes, and revokes its tokens; only for its owner', async () => {
    const { record, secret } = await registerApplication(storage, ownerId, app);
    const other = (await registerApplication(storage, ownerId, { ...app, name: 'Other' })).record;
    const code = (id: string, application_id: number) => ({
      id,
      code_digest: id,
      application_id,
      user_id: ownerId,
      redirect_uri: app.redirect_uris[0]!,
      scopes: ['api' as const],
      code_challenge: null,
      code_challenge_method: null,
      created_at: 0,
      expires_at: 9e9,
      used_at: null,
    });
    const token = (id: string, application_id: number) => ({
      id,
      token_digest: id,
      refresh_digest: `r-${id}`,
      application_id,
      user_id: ownerId,
      scopes: ['api' as const],
      created_at: 0,
      expires_in: 7200,
      revoked_at: null,
      code_id: null,
    });
    await store.commit(() => {
      store.insert('authorization_codes', code('c1', record.id));
      store.insert('authorization_codes', code('c2', other.id));
      store.insert('access_tokens', token('t1', record.id));
      store.insert('access_tokens', token('t2', other.id));
    });

    expect(await deleteApplication(storage, otherId, record.id)).toBe(false);
    expect(await findApplicationByUid(storage, record.uid)).toBe(record);

    expect(await deleteApplication(storage, ownerId, record.id)).toBe(true);
    expect(await findApplicationByUid(storage, record.uid)).toBeNull();
    expect(await authenticateClient(storage, record.uid, secret)).toBeNull();
    expect(store.data.authorization_codes.map((c) => c.id)).toEqual(['c2']);
    expect(store.lookup('authorization_codes', 'code_digest', 'c1')).toBeUndefined();
    expect(store.lookup('access_tokens', 'id', 't1')?.revoked_at).toEqual(expect.any(Number));
    expect(store.lookup('access_tokens', 'id', 't2')?.revoked_at).toBeNull();
    expect(await deleteApplication(storage, ownerId, record.id)).toBe(false);
  });
});
