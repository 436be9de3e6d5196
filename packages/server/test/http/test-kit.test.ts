// The test kit over HTTP (openapi.yaml, tag test_helpers, issue 19): state shaped with the seed's rules, tokens minted
// as the real grants issue them, the authorization step headless and automatic, the instance's clock, reset, the
// request journal and queued faults; on the file store and, in the `postgres` project, on PostgreSQL (where reset is
// refused).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authorizedApplications } from '../../src/domain/authorized-applications.js';
import { Agent, signIn } from '../support/agent.js';
import { form, json, startTestServer, type TestServer } from '../support/server.js';

const rootPat = 'tbpat-root-test-kit-token-000000000000000000000';
const jsmithPat = 'tbpat-jsmith-test-kit-token-0000000000000000000';
const secret = 'kit-app-secret-0123456789abcdef';
const redirectUri = 'http://127.0.0.1:9/callback';
const kitSeed = {
  users: [
    { username: 'root', email: 'root@example.com', name: 'Administrator', password: 'administrator-password', is_admin: true, personal_access_tokens: [{ name: 'kit', token: rootPat, scopes: ['api'] }] },
    { username: 'jsmith', email: 'jsmith@example.com', name: 'Jane Smith', password: 'correct-horse-battery', personal_access_tokens: [{ name: 't', token: jsmithPat, scopes: ['api'] }] },
  ],
  groups: [{ path: 'acme', name: 'Acme', visibility: 'private', members: [{ username: 'jsmith', access_level: 50 }] }],
  projects: [{ namespace: 'acme', path: 'widgets', name: 'Widgets', visibility: 'private' }],
  applications: [{ name: 'Kit App', owner: 'jsmith', client_id: 'kit-app', client_secret: secret, redirect_uris: [redirectUri], scopes: ['api', 'read_user'] }],
};

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ seed: kitSeed, testHelpers: true, tokenTtl: 60 });
});
afterAll(() => server.close());

const helper = async (method: string, path: string, body?: unknown, token = rootPat) => {
  const response = await fetch(`${server.baseUrl}/api/v4/test_helpers${path}`, { ...(body === undefined ? { method } : json(method, body)), headers: { 'PRIVATE-TOKEN': token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) } });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
};
const token = (params: Record<string, string>) => fetch(`${server.baseUrl}/oauth/token`, form({ client_id: 'kit-app', client_secret: secret, ...params }));
const user = (accessToken: string) => fetch(`${server.baseUrl}/api/v4/user`, { headers: { authorization: `Bearer ${accessToken}` } });
const canReset = () => server.kind === 'file';

beforeEach(async () => {
  if (canReset()) expect((await helper('POST', '/reset')).status).toBe(204);
  else await Promise.all([helper('DELETE', '/faults'), helper('DELETE', '/requests'), helper('PUT', '/auto_approval', { username: null })]);
});

describe('shaping state', () => {
  it('adds users, groups, projects, memberships and applications with the seed fixture rules, and refuses what a fixture would', async () => {
    const name = `u${Date.now().toString(36)}`;
    const created = await helper('POST', '/users', { username: name, email: `${name}@example.com`, name: 'New User', password: 'a long enough password' });
    expect(created).toMatchObject({ status: 201, body: { username: name, is_admin: false, state: 'active' } });
    expect((await helper('POST', '/users', { username: name.toUpperCase(), email: `other-${name}@example.com`, name: 'Twin', password: 'a long enough password' })).body.message).toBe(`400 Bad request - username "${name.toUpperCase()}" is already taken`);
    expect((await helper('POST', '/users', { username: `${name}x`, email: `${name}x@example.com`, name: 'Short', password: 'short' })).status).toBe(400);

    expect(await helper('POST', '/groups', { path: `g-${name}`, name: 'G', members: [{ username: name, access_level: 30 }] })).toMatchObject({ status: 201, body: { path: `g-${name}`, visibility: 'private' } });
    expect(await helper('POST', '/projects', { namespace: `g-${name}`, path: 'p', name: 'P' })).toMatchObject({ status: 201, body: { path_with_namespace: `g-${name}/p` } });
    const refusedMember = await helper('POST', '/groups', { path: `h-${name}`, name: 'H', members: [{ username: 'ghost', access_level: 30 }] });
    expect(refusedMember.status).toBe(400);
    expect(refusedMember.body.message).toContain('ghost');

    // The member of the group becomes a maintainer of the project: the API shows them the project.
    const pat = (await helper('POST', '/personal_access_tokens', { username: name, name: 'reader', scopes: ['read_api'] })).body.token as string;
    const project = () => fetch(`${server.baseUrl}/api/v4/projects/g-${name}%2Fp`, { headers: { 'PRIVATE-TOKEN': pat } });
    expect((await project()).status).toBe(200);
    const outsider = `o${name}`;
    await helper('POST', '/users', { username: outsider, email: `${outsider}@example.com`, name: 'Outsider', password: 'a long enough password' });
    const outsiderPat = (await helper('POST', '/personal_access_tokens', { username: outsider, name: 'reader', scopes: ['read_api'] })).body.token as string;
    const seen = () => fetch(`${server.baseUrl}/api/v4/projects/g-${name}%2Fp`, { headers: { 'PRIVATE-TOKEN': outsiderPat } });
    expect((await seen()).status).toBe(404);
    expect(await helper('PUT', '/memberships', { username: outsider, project: `g-${name}/p`, access_level: 20 })).toMatchObject({ status: 200, body: { username: outsider, project: `g-${name}/p`, access_level: 20 } });
    expect((await seen()).status).toBe(200);
    expect((await helper('PUT', '/memberships', { username: outsider, group: `g-${name}`, project: `g-${name}/p`, access_level: 20 })).status).toBe(400);
    expect((await helper('PUT', '/memberships', { username: outsider, project: 'nowhere/at-all', access_level: 20 })).body.message).toContain('nowhere/at-all');

    const app = await helper('POST', '/applications', { name: 'Mine', owner: name, redirect_uris: ['http://127.0.0.1:9/cb'], scopes: ['read_user'] });
    expect(app).toMatchObject({ status: 201, body: { confidential: true, scopes: ['read_user'], client_id: expect.any(String), client_secret: expect.any(String) } });
    const pub = await helper('POST', '/applications', { name: 'Public', owner: name, redirect_uris: ['http://127.0.0.1:9/cb'], confidential: false });
    expect(pub.body).toMatchObject({ confidential: false, client_secret: null });
  });

  it('is for administrators only, with the usual scopes', async () => {
    expect(await helper('POST', '/users', { username: 'nobody', email: 'nobody@example.com', name: 'N', password: 'a long enough password' }, jsmithPat)).toMatchObject({ status: 403 });
    expect((await helper('GET', '/clock', undefined, 'tbpat-not-a-token-000000000000000000000')).status).toBe(401);
  });
});

describe('tokens without the browser', () => {
  it('mints a pair as the code grant issues it: it refreshes, introspects, and is revoked with the authorization', async () => {
    const minted = await helper('POST', '/oauth_tokens', { username: 'jsmith', client_id: 'kit-app', scopes: ['read_user'] });
    expect(minted).toMatchObject({ status: 201, body: { token_type: 'bearer', scope: 'read_user', expires_in: 60 } });
    const { access_token, refresh_token } = minted.body as { access_token: string; refresh_token: string };
    expect(await (await user(access_token)).json()).toMatchObject({ username: 'jsmith' });
    const introspected = await (await fetch(`${server.baseUrl}/oauth/introspect`, form({ token: access_token, client_id: 'kit-app', client_secret: secret }))).json();
    expect(introspected).toMatchObject({ active: true, client_id: 'kit-app', username: 'jsmith', scope: 'read_user' });
    // The user's page of authorized applications lists it, as after a real authorization.
    const jsmith = (await server.storage.users.byUsername('jsmith'))!;
    expect((await authorizedApplications(server.storage, jsmith.id, Date.parse((await helper('GET', '/clock')).body.now) / 1000)).map((entry) => entry.application?.name)).toContain('Kit App');
    const rotated = await token({ grant_type: 'refresh_token', refresh_token });
    expect(rotated.status).toBe(200);
    // The old refresh token coming back kills the chain, as for any code-grant pair.
    expect((await token({ grant_type: 'refresh_token', refresh_token })).status).toBe(400);
    expect((await user(((await rotated.json()) as { access_token: string }).access_token)).status).toBe(401);

    expect((await helper('POST', '/oauth_tokens', { username: 'jsmith', client_id: 'kit-app', scopes: ['read_api'] })).body.message).toMatch(/scopes must be within the application's scopes/);
    expect((await helper('POST', '/oauth_tokens', { username: 'ghost', client_id: 'kit-app' })).body.message).toMatch(/username must name an existing user/);
  });

  it('creates a personal access token the API accepts and the user can revoke', async () => {
    const pat = await helper('POST', '/personal_access_tokens', { username: 'jsmith', name: 'ci', scopes: ['read_user'], expires_at: '2099-12-31' });
    expect(pat).toMatchObject({ status: 201, body: { name: 'ci', scopes: ['read_user'], expires_at: '2099-12-31' } });
    expect((await fetch(`${server.baseUrl}/api/v4/user`, { headers: { 'PRIVATE-TOKEN': pat.body.token } })).status).toBe(200);
    const listed = await server.storage.personalAccessTokens.ofUser((await server.storage.users.byUsername('jsmith'))!.id);
    expect(listed.map((t) => t.name)).toContain('ci');
  });
});

describe('the authorization step', () => {
  it('runs headless: the code redeems once, with the PKCE verifier', async () => {
    const verifier = 'v'.repeat(43);
    const challenge = (await import('node:crypto')).createHash('sha256').update(verifier).digest('base64url');
    const auth = await helper('POST', '/authorizations', { username: 'jsmith', client_id: 'kit-app', redirect_uri: redirectUri, state: 's1', scope: 'api', code_challenge: challenge, code_challenge_method: 'S256' });
    expect(auth).toMatchObject({ status: 201, body: { state: 's1', error: null, code: expect.any(String) } });
    expect(auth.body.redirect_to).toBe(`${redirectUri}?code=${auth.body.code}&state=s1`);
    expect((await token({ grant_type: 'authorization_code', code: auth.body.code, redirect_uri: redirectUri })).status).toBe(400);
    expect((await token({ grant_type: 'authorization_code', code: auth.body.code, redirect_uri: redirectUri, code_verifier: verifier })).status).toBe(200);

    const refused = await helper('POST', '/authorizations', { username: 'jsmith', client_id: 'kit-app', redirect_uri: redirectUri, scope: 'sudo', state: 's2' });
    expect(refused.body).toMatchObject({ code: null, error: 'invalid_scope', state: 's2' });
    expect((await helper('POST', '/authorizations', { username: 'jsmith', client_id: 'kit-app', redirect_uri: 'http://evil.example/cb' })).status).toBe(400);
  });

  it('an expired code is refused once the clock has passed its lifetime', async () => {
    const auth = await helper('POST', '/authorizations', { username: 'jsmith', client_id: 'kit-app', redirect_uri: redirectUri });
    await helper('POST', '/clock', { seconds: 601 });
    expect(await (await token({ grant_type: 'authorization_code', code: auth.body.code, redirect_uri: redirectUri })).json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('approves automatically as the named user, through the real endpoint, with no form', async () => {
    expect(await helper('PUT', '/auto_approval', { username: 'jsmith' })).toMatchObject({ status: 200, body: { username: 'jsmith' } });
    const agent = new Agent(server.baseUrl);
    const answer = await agent.get(`/oauth/authorize?client_id=kit-app&redirect_uri=${encodeURIComponent(redirectUri)}&response_type=code&state=auto`);
    expect(answer.status).toBe(302);
    const location = new URL(answer.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(redirectUri);
    expect(location.searchParams.get('state')).toBe('auto');
    const redeemed = await token({ grant_type: 'authorization_code', code: location.searchParams.get('code')!, redirect_uri: redirectUri });
    expect(await (await user(((await redeemed.json()) as { access_token: string }).access_token)).json()).toMatchObject({ username: 'jsmith' });
    expect((await helper('PUT', '/auto_approval', { username: 'ghost' })).status).toBe(400);
    expect(await helper('PUT', '/auto_approval', { username: null })).toMatchObject({ body: { username: null } });
    expect((await new Agent(server.baseUrl).get(`/oauth/authorize?client_id=kit-app&redirect_uri=${encodeURIComponent(redirectUri)}&response_type=code`)).headers.get('location')).toMatch(/\/users\/sign_in/);
  });
});

describe('device authorizations', () => {
  const deviceGrant = 'urn:ietf:params:oauth:grant-type:device_code';
  const startDevice = async () =>
    (await (await fetch(`${server.baseUrl}/oauth/authorize_device`, form({ client_id: 'kit-app', client_secret: secret, scope: 'read_user' }))).json()) as { device_code: string; user_code: string };
  const poll = async (deviceCode: string) => (await (await token({ grant_type: deviceGrant, device_code: deviceCode })).json()) as Record<string, unknown>;

  it('are approved or denied headless as a named user, the code typed as a person would', async () => {
    const approved = await startDevice();
    const typed = `${approved.user_code.slice(0, 4).toLowerCase()}-${approved.user_code.slice(4)}`;
    expect(await helper('POST', '/device_authorizations', { user_code: typed, username: 'jsmith', decision: 'approve' })).toEqual({
      status: 201,
      body: { client_id: 'kit-app', scope: 'read_user', username: 'jsmith', decision: 'approve' },
    });
    const tokens = await poll(approved.device_code);
    expect(await (await user(tokens.access_token as string)).json()).toMatchObject({ username: 'jsmith' });

    const denied = await startDevice();
    expect((await helper('POST', '/device_authorizations', { user_code: denied.user_code, username: 'root', decision: 'deny' })).status).toBe(201);
    expect(await poll(denied.device_code)).toMatchObject({ error: 'access_denied' });
  });

  it('refuse an answered, unknown or expired code, and an unknown user, as the page would', async () => {
    const device = await startDevice();
    const decide = (fields: Record<string, string>) => helper('POST', '/device_authorizations', { user_code: device.user_code, username: 'jsmith', decision: 'approve', ...fields });
    expect((await decide({ username: 'ghost' })).body.message).toBe('400 Bad request - username must name an existing user: there is no user "ghost"');
    expect((await decide({ user_code: 'ZZZZ-ZZZZ' })).body.message).toBe('400 Bad request - user_code must be the code of a device authorization: there is none with this code');
    expect((await decide({})).status).toBe(201);
    expect((await decide({})).body.message).toBe('400 Bad request - user_code was answered already: a device authorization is approved or denied once');
    const late = await startDevice();
    await helper('POST', '/clock', { seconds: 300 });
    expect((await helper('POST', '/device_authorizations', { user_code: late.user_code, username: 'jsmith', decision: 'approve' })).body.message).toBe(
      '400 Bad request - user_code has expired: the device must start a new device authorization',
    );
  });

  it('are approved at once with automatic approval on, so the first poll gets tokens', async () => {
    await helper('PUT', '/auto_approval', { username: 'jsmith' });
    const device = await startDevice();
    expect(await poll(device.device_code)).toMatchObject({ token_type: 'bearer', scope: 'read_user', refresh_token: expect.any(String) });
    await helper('PUT', '/auto_approval', { username: null });
    expect(await poll((await startDevice()).device_code)).toMatchObject({ error: 'authorization_pending' });
  });
});

describe('the clock', () => {
  it('moves forward: access tokens and sessions expire as they would', async () => {
    const before = (await helper('GET', '/clock')).body as { now: string; offset_seconds: number };
    const minted = (await helper('POST', '/oauth_tokens', { username: 'jsmith', client_id: 'kit-app' })).body as { access_token: string };
    const agent = new Agent(server.baseUrl);
    await signIn(agent, 'jsmith', 'correct-horse-battery');
    expect((await agent.get('/profile/applications')).status).toBe(200);
    const moved = await helper('POST', '/clock', { seconds: 86_400 });
    expect(moved.body.offset_seconds).toBe(before.offset_seconds + 86_400);
    expect(Date.parse(moved.body.now) - Date.parse(before.now)).toBeGreaterThanOrEqual(86_400_000);
    expect((await user(minted.access_token)).status).toBe(401);
    expect((await agent.get('/profile/applications')).headers.get('location')).toMatch(/\/users\/sign_in/);
    expect((await helper('POST', '/clock', { seconds: 0 })).status).toBe(400);
  });
});

describe('reset', () => {
  it('brings back the seeded state, or is refused on a database shared by instances', async () => {
    if (!canReset()) {
      expect((await helper('POST', '/reset')).body.message).toMatch(/^400 Bad request - store cannot be reset: PostgreSQL/);
      return;
    }
    await helper('POST', '/users', { username: 'transient', email: 'transient@example.com', name: 'T', password: 'a long enough password' });
    await helper('PUT', '/auto_approval', { username: 'jsmith' });
    await helper('POST', '/faults', { match: {}, answer: { status: 500 } });
    await helper('POST', '/clock', { seconds: 100 });
    expect((await helper('POST', '/reset')).status).toBe(204);
    expect(await server.storage.users.byUsername('transient')).toBeUndefined();
    expect((await helper('GET', '/auto_approval')).body).toEqual({ username: null });
    expect((await helper('GET', '/faults')).body).toEqual([]);
    expect((await helper('GET', '/clock')).body.offset_seconds).toBe(0);
    expect((await helper('GET', '/requests')).body).toEqual([]);
  });
});

describe('the request journal and faults', () => {
  it('records what the app did, without a secret, and leaves the area itself out', async () => {
    const minted = (await helper('POST', '/oauth_tokens', { username: 'jsmith', client_id: 'kit-app' })).body as { access_token: string; refresh_token: string };
    await fetch(`${server.baseUrl}/api/v4/user?access_token=${minted.access_token}`);
    await token({ grant_type: 'refresh_token', refresh_token: minted.refresh_token });
    await fetch(`${server.baseUrl}/oauth/revoke`, form({ token: minted.access_token, client_id: 'kit-app', client_secret: secret }));
    const journal = (await helper('GET', '/requests?per_page=3')).body as Array<Record<string, unknown>>;
    expect(journal).toEqual([
      expect.objectContaining({ method: 'POST', path: '/oauth/revoke', status: 200, client_id: 'kit-app', grant_type: null }),
      expect.objectContaining({ method: 'POST', path: '/oauth/token', status: 200, client_id: 'kit-app', grant_type: 'refresh_token', username: 'jsmith' }),
      expect.objectContaining({ method: 'GET', path: '/api/v4/user', status: 200, client_id: 'kit-app', username: 'jsmith' }),
    ]);
    const all = JSON.stringify((await helper('GET', '/requests?per_page=1000')).body);
    for (const s of [minted.access_token, minted.refresh_token, secret, rootPat]) expect(all).not.toContain(s);
    expect(all).not.toContain('test_helpers');
    const filtered = await helper('GET', '/requests?path=/api/v3/user');
    expect(filtered.body, JSON.stringify(filtered.body)).toHaveLength(1);
  });

  it('answers the next matching request with a queued fault, once, and lists what is left', async () => {
    const minted = (await helper('POST', '/oauth_tokens', { username: 'jsmith', client_id: 'kit-app' })).body as { access_token: string; refresh_token: string };
    const queued = await helper('POST', '/faults', { match: { path: '/oauth/token', grant_type: 'refresh_token', client_id: 'kit-app' }, answer: { error: 'invalid_grant' } });
    expect(queued).toMatchObject({ status: 201, body: { remaining: 1, answer: { error: 'invalid_grant' } } });
    await helper('POST', '/faults', { match: { method: 'GET', path: '/api/v4/user' }, answer: { status: 500 }, times: 2 });
    expect((await helper('GET', '/faults')).body).toHaveLength(2);

    // Another grant does not match; the refresh does, once.
    expect((await token({ grant_type: 'password', username: 'jsmith', password: 'correct-horse-battery' })).status).toBe(200);
    const refused = await token({ grant_type: 'refresh_token', refresh_token: minted.refresh_token });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({ error: 'invalid_grant' });
    expect((await token({ grant_type: 'refresh_token', refresh_token: minted.refresh_token })).status).toBe(200);

    expect((await user(minted.access_token)).status).toBe(500);
    const second = await user(minted.access_token);
    expect([second.status, await second.json()]).toEqual([500, { message: '500 Internal Server Error' }]);
    expect((await helper('GET', '/faults')).body).toEqual([]);
    // A request is journaled once its client and user are looked up after it was answered (a query each on PostgreSQL),
    // so its entry may come a moment after the client has its answer, and after a later request's: the refresh before
    // it could be journaled last under load. So the newest entry asked is the user endpoint's.
    const last = async () => ((await helper('GET', '/requests?per_page=1&path=/api/v4/user')).body as Array<{ fault: string | null; status: number }>)[0];
    await expect.poll(last, { timeout: 5_000 }).toMatchObject({ status: 500, fault: expect.any(String) });
    expect((await helper('POST', '/faults', { match: {}, answer: {} })).status).toBe(400);
  });
});
