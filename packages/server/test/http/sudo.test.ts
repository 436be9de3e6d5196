// The service's sudo over real HTTP: an administrator's token with the `sudo` scope acts as another user named by the
// `Sudo` header or the `sudo` parameter; every other combination is refused as the service refuses it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

const tokens = {
  rootSudo: 'tbpat-root-sudo-token-000000000000000000000',
  rootApi: 'tbpat-root-api-token-0000000000000000000000',
  jsmithSudo: 'tbpat-jsmith-api-token-00000000000000000000',
};
const person = (username: string, extra: Record<string, unknown> = {}) => ({ username, email: `${username}@example.com`, name: username, password: 'sudo-test-password', ...extra });

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    seed: {
      users: [
        person('root', {
          is_admin: true,
          personal_access_tokens: [
            { name: 'sudo', token: tokens.rootSudo, scopes: ['api', 'sudo'] },
            { name: 'api', token: tokens.rootApi, scopes: ['api'] },
          ],
        }),
        person('jsmith', { personal_access_tokens: [{ name: 'api', token: tokens.jsmithSudo, scopes: ['api'] }] }),
        person('blocked'),
      ],
      applications: [{ name: 'Admin tool', owner: 'root', client_id: 'admin-tool', client_secret: 'admin-tool-secret-0123456789abcdef', redirect_uris: ['https://admin.example.com/cb'], scopes: ['api', 'sudo', 'admin_mode'] }],
    },
  });
  const blocked = await server.storage.users.byUsername('blocked');
  await server.storage.users.setState(blocked!.id, 'blocked');
});
afterAll(() => server?.close());

const get = async (path: string, token: string, sudo?: string) => {
  const response = await fetch(`${server.baseUrl}/api/v4${path}`, { headers: { 'PRIVATE-TOKEN': token, ...(sudo === undefined ? {} : { Sudo: sudo }) } });
  return { status: response.status, body: await response.json(), challenge: response.headers.get('www-authenticate') };
};

describe('sudo', () => {
  it('acts as the user the Sudo header or the sudo parameter names, by username or id', async () => {
    const jsmith = await get('/user', tokens.rootSudo, 'jsmith');
    expect([jsmith.status, jsmith.body.username]).toEqual([200, 'jsmith']);
    expect((await get(`/user`, tokens.rootSudo, String(jsmith.body.id))).body.username).toBe('jsmith');
    expect((await get('/user?sudo=jsmith', tokens.rootSudo)).body.username).toBe('jsmith');
    // Writes act as that user too: their settings change, not the administrator's.
    const put = await fetch(`${server.baseUrl}/api/v4/notification_settings?level=watch`, { method: 'PUT', headers: { 'PRIVATE-TOKEN': tokens.rootSudo, Sudo: 'jsmith' } });
    expect((await put.json()).notification_email).toBe('jsmith@example.com');
    expect((await get('/notification_settings', tokens.rootSudo)).body.level).not.toBe('watch');
    expect((await get('/user', tokens.rootSudo)).body.username).toBe('root');
  });

  it('refuses a user who is no administrator, an administrator token without sudo, and an unknown or blocked user', async () => {
    expect(await get('/user', tokens.jsmithSudo, 'root')).toMatchObject({ status: 403, body: { message: '403 Forbidden - Must be admin to use sudo' } });
    const scopeless = await get('/user', tokens.rootApi, 'jsmith');
    expect(scopeless).toMatchObject({ status: 403, challenge: 'Bearer realm="tokenbell", error="insufficient_scope", scope="sudo"' });
    expect(await get('/user', tokens.rootSudo, 'nobody')).toEqual({ status: 404, body: { message: "404 User with ID or username 'nobody' Not Found" }, challenge: null });
    expect((await get('/user', tokens.rootSudo, 'blocked')).status).toBe(404);
  });
});

describe('admin_mode', () => {
  it('is accepted and recorded on an application and its tokens, and shown by token info and introspection', async () => {
    const client = { client_id: 'admin-tool', client_secret: 'admin-tool-secret-0123456789abcdef' };
    const issued = await fetch(`${server.baseUrl}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'password', username: 'root', password: 'sudo-test-password', scope: 'api sudo admin_mode', ...client }),
    });
    expect(issued.status).toBe(200);
    const token = (await issued.json()) as { access_token: string; scope: string };
    expect(token.scope).toBe('api sudo admin_mode');
    const bearer = { authorization: `Bearer ${token.access_token}` };
    expect(await (await fetch(`${server.baseUrl}/oauth/token/info`, { headers: bearer })).json()).toMatchObject({ scope: ['api', 'sudo', 'admin_mode'] });
    const introspection = await fetch(`${server.baseUrl}/oauth/introspect`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}` },
      body: new URLSearchParams({ token: token.access_token }),
    });
    expect(await introspection.json()).toMatchObject({ active: true, scope: 'api sudo admin_mode' });
    // An OAuth token's sudo works as a personal access token's does.
    expect(await (await fetch(`${server.baseUrl}/api/v4/user`, { headers: { ...bearer, Sudo: 'jsmith' } })).json()).toMatchObject({ username: 'jsmith' });
  });
});
