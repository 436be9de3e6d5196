import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveAuthorization, checkAuthorizationRequest } from '../../src/domain/oauth/authorization.js';
import { registerApplication } from '../../src/domain/applications.js';
import { Agent, signIn } from '../support/agent.js';
import { form, json, seed, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const post = (path: string, init: RequestInit) => fetch(server.baseUrl + path, init);
const clientParams = { client_id: seed.client.id, client_secret: seed.client.secret };

/** Gets a code the way the consent page does, for a signed-in jsmith. */
async function issueCode(extra: { code_challenge?: string; scope?: string } = {}): Promise<string> {
  const checked = await checkAuthorizationRequest(server.storage, {
    client_id: seed.client.id,
    redirect_uri: seed.redirectUri,
    response_type: 'code',
    state: 'xyz',
    ...(extra.code_challenge ? { code_challenge: extra.code_challenge, code_challenge_method: 'S256' } : {}),
    ...(extra.scope ? { scope: extra.scope } : {}),
  });
  if (checked.outcome !== 'valid') throw new Error(`authorization request refused: ${checked.outcome}`);
  const jsmith = (await server.storage.users.byUsername('jsmith'))!;
  const location = await approveAuthorization(server.storage, jsmith.id, checked.request, { now: server.now(), codeTtl: 600, authTime: server.now() });
  return new URL(location).searchParams.get('code')!;
}

const exchange = (code: string, extra: Record<string, string> = {}) =>
  post('/oauth/token', form({ grant_type: 'authorization_code', code, redirect_uri: seed.redirectUri, ...clientParams, ...extra }));

async function expectOAuthError(response: Response, status: number, error: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('cache-control')).toBe('no-store');
  const body = await response.json();
  expect(body.error).toBe(error);
  expect(typeof body.error_description).toBe('string');
  return body as { error: string; error_description: string };
}

describe('authorization_code grant', () => {
  it('exchanges a code for a bearer token pair with the no-store headers', async () => {
    const response = await exchange(await issueCode());
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('pragma')).toBe('no-cache');
    const body = await response.json();
    expect(body).toMatchObject({ token_type: 'bearer', expires_in: 7200, scope: 'api read_api read_user' });
    expect(body.access_token).toMatch(/^tba_/);
    expect(body.refresh_token).toMatch(/^tbr_/);
    expect(Math.abs(body.created_at - server.now())).toBeLessThan(5);
    const me = await fetch(`${server.baseUrl}/api/v3/user`, { headers: { authorization: `Bearer ${body.access_token}` } });
    expect((await me.json()).username).toBe('jsmith');
  });

  it('accepts JSON bodies and HTTP Basic client authentication', async () => {
    const code = await issueCode();
    const basic = Buffer.from(`${seed.client.id}:${seed.client.secret}`).toString('base64');
    const response = await post('/oauth/token', {
      ...json('POST', { grant_type: 'authorization_code', code, redirect_uri: seed.redirectUri }),
      headers: { 'content-type': 'application/json', authorization: `Basic ${basic}` },
    });
    expect(response.status).toBe(200);
  });

  it('refuses a reused code and revokes the tokens issued from it', async () => {
    const code = await issueCode();
    const first = await (await exchange(code)).json();
    await expectOAuthError(await exchange(code), 400, 'invalid_grant');
    const me = await fetch(`${server.baseUrl}/api/v3/user`, { headers: { authorization: `Bearer ${first.access_token}` } });
    expect(me.status).toBe(401);
    const refreshed = await post('/oauth/token', form({ grant_type: 'refresh_token', refresh_token: first.refresh_token, ...clientParams }));
    await expectOAuthError(refreshed, 400, 'invalid_grant');
  });

  it('refuses a code after ten minutes', async () => {
    const code = await issueCode();
    server.advance(601);
    try {
      await expectOAuthError(await exchange(code), 400, 'invalid_grant');
    } finally {
      server.advance(-601);
    }
  });

  it('refuses a redirect_uri that differs from the authorization request', async () => {
    await expectOAuthError(await exchange(await issueCode(), { redirect_uri: `${seed.redirectUri}/` }), 400, 'invalid_grant');
  });

  it('refuses a wrong client secret with 401 invalid_client', async () => {
    await expectOAuthError(await exchange(await issueCode(), { client_secret: 'tbcs_wrong' }), 401, 'invalid_client');
  });

  it('refuses a wrong Basic secret with 401 and a Basic challenge', async () => {
    const basic = Buffer.from(`${seed.client.id}:nope`).toString('base64');
    const response = await post('/oauth/token', {
      ...form({ grant_type: 'authorization_code', code: await issueCode(), redirect_uri: seed.redirectUri }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
    });
    await expectOAuthError(response, 401, 'invalid_client');
    expect(response.headers.get('www-authenticate')).toMatch(/^Basic/);
  });

  it('refuses a code grant without client authentication', async () => {
    const response = await post('/oauth/token', form({ grant_type: 'authorization_code', code: await issueCode(), redirect_uri: seed.redirectUri }));
    await expectOAuthError(response, 401, 'invalid_client');
  });

  describe('PKCE (RFC 7636)', () => {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');

    it('accepts the right verifier', async () => {
      expect((await exchange(await issueCode({ code_challenge: challenge }), { code_verifier: verifier })).status).toBe(200);
    });
    it('refuses a wrong verifier', async () => {
      const body = await expectOAuthError(
        await exchange(await issueCode({ code_challenge: challenge }), { code_verifier: randomBytes(32).toString('base64url') }),
        400,
        'invalid_grant',
      );
      expect(body.error_description).toMatch(/code_verifier/);
    });
    it('refuses a missing verifier when a challenge was sent', async () => {
      await expectOAuthError(await exchange(await issueCode({ code_challenge: challenge })), 400, 'invalid_grant');
    });
    it('refuses a verifier when no challenge was sent', async () => {
      await expectOAuthError(await exchange(await issueCode(), { code_verifier: verifier }), 400, 'invalid_grant');
    });
  });
});

describe('password grant', () => {
  const password = (username: string, pw: string, extra: Record<string, string> = {}) =>
    post('/oauth/token', form({ grant_type: 'password', username, password: pw, ...extra }));

  it('answers access_token, token_type and expires_in without a refresh_token', async () => {
    const response = await password('jsmith', seed.jsmith.password);
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({ token_type: 'bearer', expires_in: 7200, scope: 'api' });
    expect(body).not.toHaveProperty('refresh_token');
  });

  it('accepts the e-mail address as the username', async () => {
    expect((await password('jsmith@example.com', seed.jsmith.password)).status).toBe(200);
  });

  it('gives one answer for an unknown user and a wrong password', async () => {
    const wrong = await expectOAuthError(await password('jsmith', 'not-the-password'), 400, 'invalid_grant');
    const unknown = await expectOAuthError(await password('nobody-here', 'not-the-password'), 400, 'invalid_grant');
    expect(unknown).toEqual(wrong);
  });

  it('refuses users with two-factor authentication exactly as a wrong password, with a description that covers both', async () => {
    const right = await password('awong', seed.awong.password);
    const wrong = await password('awong', 'not-the-password');
    expect(right.status).toBe(wrong.status);
    expect(await right.text()).toBe(await wrong.text());
    const body = await expectOAuthError(await password('awong', seed.awong.password), 400, 'invalid_grant');
    expect(body.error_description).toMatch(/two-factor/i);
    expect(body.error_description).toMatch(/personal access token/i);
  });

  it('checks client credentials when they are sent', async () => {
    await expectOAuthError(await password('jsmith', seed.jsmith.password, { client_id: seed.client.id, client_secret: 'bad' }), 401, 'invalid_client');
  });

  it('refuses a scope the grant cannot have', async () => {
    await expectOAuthError(await password('jsmith', seed.jsmith.password, { scope: 'admin' }), 400, 'invalid_scope');
  });
});

describe('refresh_token grant', () => {
  it('rotates the refresh token and revokes the old pair', async () => {
    const first = await (await exchange(await issueCode())).json();
    const response = await post('/oauth/token', form({ grant_type: 'refresh_token', refresh_token: first.refresh_token, ...clientParams }));
    expect(response.status).toBe(200);
    const second = await response.json();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    const old = await fetch(`${server.baseUrl}/api/v3/user`, { headers: { authorization: `Bearer ${first.access_token}` } });
    expect(old.status).toBe(401);
    const fresh = await fetch(`${server.baseUrl}/api/v3/user`, { headers: { authorization: `Bearer ${second.access_token}` } });
    expect(fresh.status).toBe(200);
  });

  it('treats a replayed refresh token as a leak and ends the chain', async () => {
    const first = await (await exchange(await issueCode())).json();
    const second = await (await post('/oauth/token', form({ grant_type: 'refresh_token', refresh_token: first.refresh_token, ...clientParams }))).json();
    const replay = await post('/oauth/token', form({ grant_type: 'refresh_token', refresh_token: first.refresh_token, ...clientParams }));
    await expectOAuthError(replay, 400, 'invalid_grant');
    const me = await fetch(`${server.baseUrl}/api/v3/user`, { headers: { authorization: `Bearer ${second.access_token}` } });
    expect(me.status).toBe(401);
  });

  it('may narrow the scope but never widen it', async () => {
    const first = await (await exchange(await issueCode({ scope: 'read_user' }))).json();
    const widened = await post('/oauth/token', form({ grant_type: 'refresh_token', refresh_token: first.refresh_token, scope: 'api', ...clientParams }));
    await expectOAuthError(widened, 400, 'invalid_scope');
  });

  it('narrows along the scope hierarchy: api includes read_api, which includes read_user', async () => {
    const readApi = await (await exchange(await issueCode({ scope: 'read_api' }))).json();
    const narrowed = await post('/oauth/token', form({ grant_type: 'refresh_token', refresh_token: readApi.refresh_token, scope: 'read_user', ...clientParams }));
    expect(narrowed.status).toBe(200);
    expect((await narrowed.json()).scope).toBe('read_user');

    const api = await (await exchange(await issueCode({ scope: 'api' }))).json();
    const toReadApi = await post('/oauth/token', form({ grant_type: 'refresh_token', refresh_token: api.refresh_token, scope: 'read_api read_user', ...clientParams }));
    expect(toReadApi.status).toBe(200);
    expect((await toReadApi.json()).scope).toBe('read_api read_user');
  });
});

describe('scope narrowing for an application registered with api only', () => {
  it('lets the password grant and the authorization request ask for the scopes api includes', async () => {
    const jsmith = (await server.storage.users.byUsername('jsmith'))!;
    const { record, secret } = await registerApplication(server.storage, jsmith.id, { name: 'API only', redirect_uris: ['https://api-only.example/cb'], scopes: ['api'] });
    const granted = await post('/oauth/token', form({ grant_type: 'password', username: 'jsmith', password: seed.jsmith.password, scope: 'read_api', client_id: record.uid, client_secret: secret }));
    expect(granted.status).toBe(200);
    expect((await granted.json()).scope).toBe('read_api');

    const agent = new Agent(server.baseUrl);
    expect((await signIn(agent, 'jsmith', seed.jsmith.password)).status).toBe(302);
    const consent = await agent.get(`/oauth/authorize?client_id=${record.uid}&redirect_uri=${encodeURIComponent('https://api-only.example/cb')}&response_type=code&scope=read_user`);
    expect(consent.status).toBe(200);
    expect(await consent.text()).toContain('read_user');
  });
});

describe('malformed token requests', () => {
  it('answers unsupported_grant_type for the client credentials and implicit-style grants', async () => {
    for (const grant_type of ['client_credentials', 'token', 'urn:ietf:params:oauth:grant-type:jwt-bearer']) {
      await expectOAuthError(await post('/oauth/token', form({ grant_type, ...clientParams })), 400, 'unsupported_grant_type');
    }
  });
  it('answers invalid_request for a missing parameter, naming it', async () => {
    const body = await expectOAuthError(await post('/oauth/token', form({ grant_type: 'password', username: 'jsmith' })), 400, 'invalid_request');
    expect(body.error_description).toMatch(/password/);
  });
  it('answers invalid_request for broken JSON', async () => {
    const response = await post('/oauth/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"grant_type":' });
    await expectOAuthError(response, 400, 'invalid_request');
  });
});

describe('revocation, introspection, token info and metadata', () => {
  it('revokes an access token (RFC 7009) and answers 200 for unknown tokens', async () => {
    const tokens = await (await exchange(await issueCode())).json();
    const revoked = await post('/oauth/revoke', form({ token: tokens.access_token, ...clientParams }));
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toEqual({});
    const me = await fetch(`${server.baseUrl}/api/v3/user`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(me.status).toBe(401);
    expect((await post('/oauth/revoke', form({ token: 'tba_unknown', ...clientParams }))).status).toBe(200);
  });

  it('introspects active and inactive tokens for an authenticated client (RFC 7662)', async () => {
    const tokens = await (await exchange(await issueCode())).json();
    const active = await (await post('/oauth/introspect', form({ token: tokens.access_token, ...clientParams }))).json();
    expect(active).toMatchObject({ active: true, username: 'jsmith', client_id: seed.client.id, token_type: 'Bearer' });
    const inactive = await (await post('/oauth/introspect', form({ token: 'tba_nope', ...clientParams }))).json();
    expect(inactive).toEqual({ active: false });
    await expectOAuthError(await post('/oauth/introspect', form({ token: tokens.access_token })), 401, 'invalid_client');
  });

  it('describes the bearer token at /oauth/token/info', async () => {
    const tokens = await (await exchange(await issueCode())).json();
    const info = await (await fetch(`${server.baseUrl}/oauth/token/info`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).json();
    expect(info).toMatchObject({ scope: ['api', 'read_api', 'read_user'], application: { uid: seed.client.id } });
    const missing = await fetch(`${server.baseUrl}/oauth/token/info`);
    expect(missing.status).toBe(401);
    expect((await missing.json()).error).toBe('invalid_token');
  });

  it('publishes RFC 8414 metadata', async () => {
    const meta = await (await fetch(`${server.baseUrl}/.well-known/oauth-authorization-server`)).json();
    expect(meta.grant_types_supported).toEqual(['authorization_code', 'password', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']);
    expect(meta.code_challenge_methods_supported).toEqual(['S256']);
    expect(meta.token_endpoint).toBe(`${meta.issuer}/oauth/token`);
  });
});
