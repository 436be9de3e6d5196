// The first calls GitLab's tools make, over real HTTP: the version and metadata, the personal access token a request
// is made with (and its revocation), and another user.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { form, seed, startTestServer, type TestServer } from '../support/server.js';
import { version as tokenbellVersion } from '../../src/version.js';
import { createPersonalAccessToken } from '../../src/domain/accounts.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

async function passwordToken(username: string, password: string, scope: string): Promise<string> {
  const response = await fetch(`${server.baseUrl}/oauth/token`, form({ grant_type: 'password', username, password, scope }));
  expect(response.status).toBe(200);
  return (await response.json()).access_token;
}
const get = (path: string, headers: Record<string, string> = {}, method = 'GET') => fetch(`${server.baseUrl}${path}`, { method, headers });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('version and metadata', () => {
  it.each(['/api/v4/version', '/api/v4/metadata', '/api/v3/version'])('%s answers the service fields to any valid token, whatever its scopes', async (path) => {
    const expected = {
      version: '17.11.0',
      revision: `tokenbell-${tokenbellVersion}`,
      kas: { enabled: false, externalUrl: null, externalK8sProxyUrl: null, version: null },
      enterprise: false,
    };
    expect(await (await get(path, { 'PRIVATE-TOKEN': seed.awong.pat })).json()).toEqual(expected);
    for (const scope of ['read_repository', 'openid', 'read_user']) {
      const response = await get(path, bearer(await passwordToken('jsmith', seed.jsmith.password, scope)));
      expect(response.status, scope).toBe(200);
      expect(await response.json()).toEqual(expected);
    }
  });

  it('answers 401 without a token, as the service does', async () => {
    const response = await get('/api/v4/version');
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ message: '401 Unauthorized' });
  });
});

describe('personal_access_tokens/self', () => {
  it('shows the token the request is made with, never its secret', async () => {
    const response = await get('/api/v4/personal_access_tokens/self', { 'PRIVATE-TOKEN': seed.awong.pat });
    expect(response.status).toBe(200);
    const token = await response.json();
    expect(token).toMatchObject({ name: 'ci', scopes: ['read_api'], active: true, revoked: false, expires_at: '2099-12-31', last_used_at: null, description: null });
    expect(Object.keys(token).sort()).toEqual(['active', 'created_at', 'description', 'expires_at', 'id', 'last_used_at', 'name', 'revoked', 'scopes', 'user_id']);
    const awong = await (await get('/api/v4/user', { 'PRIVATE-TOKEN': seed.awong.pat })).json();
    expect(token.user_id).toBe(awong.id);
    expect(JSON.stringify(token)).not.toContain(seed.awong.pat);
  });

  it('answers 404 to an OAuth token, which is no personal access token', async () => {
    const response = await get('/api/v4/personal_access_tokens/self', bearer(await passwordToken('jsmith', seed.jsmith.password, 'api')));
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ message: '404 Not Found' });
  });

  it('DELETE revokes the token at once (204), whatever its scopes; it is 401 from then on', async () => {
    const user = await server.storage.users.byUsername('mallory');
    const { token } = await createPersonalAccessToken(server.storage, user!.id, { name: 'git only', scopes: ['read_repository'] });
    expect((await get('/api/v4/personal_access_tokens/self', { 'PRIVATE-TOKEN': token })).status).toBe(200);
    const revoked = await get('/api/v4/personal_access_tokens/self', { 'PRIVATE-TOKEN': token }, 'DELETE');
    expect(revoked.status).toBe(204);
    expect(await revoked.text()).toBe('');
    expect((await get('/api/v4/personal_access_tokens/self', { 'PRIVATE-TOKEN': token })).status).toBe(401);
    expect((await get('/api/v4/version', { 'PRIVATE-TOKEN': token })).status).toBe(401);
  });
});

describe('users/:id', () => {
  it('shows another user the basic fields, and the account itself every field', async () => {
    const me = await (await get('/api/v4/user', { 'PRIVATE-TOKEN': seed.jsmith.pat })).json();
    const awong = await (await get('/api/v4/user', { 'PRIVATE-TOKEN': seed.awong.pat })).json();
    expect(await (await get(`/api/v4/users/${me.id}`, { 'PRIVATE-TOKEN': seed.jsmith.pat })).json()).toEqual(me);
    const seen = await (await get(`/api/v4/users/${awong.id}`, { 'PRIVATE-TOKEN': seed.jsmith.pat })).json();
    const { email: _e, two_factor_enabled: _t, is_admin: _a, ...basic } = awong;
    expect(seen).toEqual(basic);
  });

  it('answers 404 User Not Found for an unknown id, 400 for one that is not a number, 403 without read_user', async () => {
    const unknown = await get('/api/v4/users/99999', { 'PRIVATE-TOKEN': seed.jsmith.pat });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ message: '404 User Not Found' });
    expect((await get('/api/v4/users/jsmith', { 'PRIVATE-TOKEN': seed.jsmith.pat })).status).toBe(400);
    expect((await get('/api/v4/users/1', bearer(await passwordToken('jsmith', seed.jsmith.password, 'read_repository')))).status).toBe(403);
  });
});
