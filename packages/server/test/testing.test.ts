// startTokenbell (src/testing.ts) as a test suite uses it: in-process, seeded, on a free loopback port, reset between
// tests, its clock moved, its helpers in-process and over HTTP with the administrator's token.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDurableData } from '../src/store/file/store.js';
import { type RunningTokenbell, type StartTokenbellOptions, startTokenbell } from '../src/testing.js';

const seed = {
  users: [{ username: 'alice', email: 'alice@example.com', name: 'Alice', password: 'correct horse battery' }],
  groups: [{ path: 'acme', name: 'Acme', visibility: 'private' as const, members: [{ username: 'alice', access_level: 30 }] }],
  applications: [{ name: 'App', owner: 'alice', client_id: 'app-client-id', client_secret: 'app-client-secret-0123456789', redirect_uris: ['http://127.0.0.1:9/callback'], scopes: ['api' as const, 'read_user' as const] }],
};

let tb: RunningTokenbell;
beforeAll(async () => {
  tb = await startTokenbell({ seed, config: { tokenTtl: 60 } });
});
afterAll(() => tb?.close());

/** Whether the instance has the user, asked as a suite can: through the helpers, not behind the API. */
const hasUser = (instance: RunningTokenbell, username: string) =>
  instance.helpers.mintPersonalAccessToken({ username, name: 'probe' }).then(
    () => true,
    (error: Error) => (/there is no user/.test(error.message) ? false : Promise.reject(error)),
  );

const api = (path: string, token: string, init: RequestInit = {}) => fetch(`${tb.url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } });

describe('startTokenbell', () => {
  it('listens on loopback, seeded, with an administrator added for the helpers', async () => {
    expect(tb.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const me = await fetch(`${tb.url}/api/v4/user`, { headers: { 'private-token': tb.adminToken } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ username: 'root', is_admin: true });
  });

  it('mints a token as the code grant would, which the API accepts until the clock passes its lifetime', async () => {
    const minted = await tb.helpers.mintAccessToken({ username: 'alice', client_id: 'app-client-id', scopes: ['read_user'] });
    expect(minted).toMatchObject({ token_type: 'bearer', expires_in: 60, scope: 'read_user' });
    expect(minted.refresh_token).toEqual(expect.any(String));
    expect(await (await api('/api/v4/user', minted.access_token)).json()).toMatchObject({ username: 'alice' });
    await tb.helpers.advanceClock(61);
    expect((await api('/api/v4/user', minted.access_token)).status).toBe(401);
    // The refresh token still works, rotated by the real grant.
    const refreshed = await fetch(`${tb.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: minted.refresh_token!, client_id: 'app-client-id', client_secret: 'app-client-secret-0123456789' }),
    });
    expect(refreshed.status).toBe(200);
  });

  it('resets to the seeded state: additions gone, the clock back, the administrator still there', async () => {
    await tb.helpers.createUser({ username: 'bob', email: 'bob@example.com', name: 'Bob', password: 'correct horse battery' });
    await tb.helpers.advanceClock(3600);
    const http = await fetch(`${tb.url}/api/v4/test_helpers/reset`, { method: 'POST', headers: { 'private-token': tb.adminToken } });
    expect(http.status).toBe(204);
    expect((await tb.helpers.clock()).offset_seconds).toBe(0);
    expect(await hasUser(tb, 'bob')).toBe(false);
    expect(await hasUser(tb, 'alice')).toBe(true);
    // The same user can be added again after the reset.
    await expect(tb.helpers.createUser({ username: 'bob', email: 'bob@example.com', name: 'Bob', password: 'correct horse battery' })).resolves.toMatchObject({ username: 'bob' });
  });

  it('runs the authorization step headless, and the code it answers redeems at the token endpoint', async () => {
    const auth = await tb.helpers.authorize({ username: 'alice', client_id: 'app-client-id', redirect_uri: 'http://127.0.0.1:9/callback', state: 'xyz', scope: 'api' });
    expect(auth.redirect_to).toMatch(/^http:\/\/127\.0\.0\.1:9\/callback\?code=.+&state=xyz$/);
    const token = await fetch(`${tb.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: auth.code!, redirect_uri: 'http://127.0.0.1:9/callback', client_id: 'app-client-id', client_secret: 'app-client-secret-0123456789' }),
    });
    expect(token.status).toBe(200);
  });

  it('answers a device authorization in-process, and a reset forgets it', async () => {
    const started = await fetch(`${tb.url}/oauth/authorize_device`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: 'app-client-id', client_secret: 'app-client-secret-0123456789' }),
    });
    const { device_code, user_code } = (await started.json()) as { device_code: string; user_code: string };
    await expect(tb.helpers.decideDeviceAuthorization({ user_code, username: 'alice', decision: 'approve' })).resolves.toEqual({
      client_id: 'app-client-id',
      scope: 'api read_user',
      username: 'alice',
      decision: 'approve',
    });
    const poll = () =>
      fetch(`${tb.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code, client_id: 'app-client-id', client_secret: 'app-client-secret-0123456789' }),
      });
    await tb.helpers.reset();
    expect(await (await poll()).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('keeps two instances in one process apart', async () => {
    const other = await startTokenbell();
    try {
      expect(other.url).not.toBe(tb.url);
      await other.helpers.createUser({ username: 'carol', email: 'carol@example.com', name: 'Carol', password: 'correct horse battery' });
      expect(await hasUser(tb, 'carol')).toBe(false);
      expect(await hasUser(other, 'alice')).toBe(false);
    } finally {
      await other.close();
    }
  });
});

describe('signIn', () => {
  it('signs a user in as an app login would: PKCE, state, approval, and the code exchanged at the token endpoint', async () => {
    await tb.helpers.reset();
    const tokens = await tb.signIn({ username: 'alice', clientId: 'app-client-id', clientSecret: 'app-client-secret-0123456789', scopes: ['read_user'] });
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'read_user', refresh_token: expect.any(String) });
    expect(await (await api('/api/v4/user', tokens.access_token)).json()).toMatchObject({ username: 'alice' });
    // The exchange was a real request to the token endpoint, with the code grant, by the application.
    expect(await tb.helpers.requests({ path: '/oauth/token' })).toEqual([expect.objectContaining({ method: 'POST', status: 200, grant_type: 'authorization_code', client_id: 'app-client-id' })]);
  });

  it('is the same from the SDK over HTTP, and a refusal is the OAuth error the redirect carried', async () => {
    const { createTokenbellTestHelpers, signIn } = await import('@tokenbell/sdk/test-helpers');
    const { OAuthError } = await import('@tokenbell/sdk');
    const overHttp = createTokenbellTestHelpers({ baseUrl: tb.url, token: tb.adminToken });
    const options = { baseUrl: tb.url, username: 'alice', clientId: 'app-client-id', clientSecret: 'app-client-secret-0123456789', redirectUri: 'http://127.0.0.1:9/callback' };
    const tokens = await signIn(overHttp, options);
    expect(tokens.scope).toBe('api read_user');
    await expect(signIn(overHttp, { ...options, scopes: 'sudo' })).rejects.toThrow(OAuthError);
    await expect(tb.signIn({ ...options, scopes: 'sudo' })).rejects.toMatchObject({ error: 'invalid_scope' });
    // Without the secret a confidential application's code is not exchanged.
    await expect(tb.signIn({ username: 'alice', clientId: 'app-client-id' })).rejects.toMatchObject({ error: 'invalid_client' });
  });
});

describe('passwordHashing', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tokenbell-kit-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  /** The scrypt parameters of each stored user's hash (`scrypt$N$r$p`), read from the data file once the instance stops. */
  async function storedParameters(name: string, options: StartTokenbellOptions): Promise<{ passwordHashing: string; stored: Record<string, string> }> {
    const dataFile = join(dir, `${name}.json`);
    const instance = await startTokenbell({ seed, dataFile, ...options });
    const { passwordHashing } = instance;
    try {
      // The cheap hash signs in, by the password grant as by any other way.
      const granted = await fetch(`${instance.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'password', username: 'alice', password: 'correct horse battery' }),
      });
      expect(granted.status).toBe(200);
      await instance.helpers.createUser({ username: 'carol', email: 'carol@example.com', name: 'Carol', password: 'correct horse battery' });
    } finally {
      await instance.close();
    }
    const users = (await readDurableData(dataFile)).users;
    return { passwordHashing, stored: Object.fromEntries(users.map((u) => [u.username, u.password_hash.split('$').slice(0, 4).join('$')])) };
  }

  it("hashes the seed's passwords, the root it adds and the users the helpers create with the cheap parameters by default, and says so", async () => {
    const { passwordHashing, stored } = await storedParameters('cheap', { seed: { users: [...seed.users, { username: 'bob', email: 'bob@example.com', name: 'Bob', password: 'correct horse battery' }] } });
    expect(passwordHashing).toBe('cheap');
    // alice signed in, so hers is production's now, as on any server.
    expect(stored).toEqual({ alice: 'scrypt$16384$8$1', bob: 'scrypt$1024$8$1', root: 'scrypt$1024$8$1', carol: 'scrypt$1024$8$1' });
  });

  it("hashes them with the production parameters when asked", async () => {
    const { passwordHashing, stored } = await storedParameters('production', { passwordHashing: 'production' });
    expect(passwordHashing).toBe('production');
    expect(stored).toEqual({ alice: 'scrypt$16384$8$1', root: 'scrypt$16384$8$1', carol: 'scrypt$16384$8$1' });
  });
});
