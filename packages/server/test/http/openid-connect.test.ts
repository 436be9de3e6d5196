// OpenID Connect over real HTTP, as the service answers it: discovery, the id_token of every grant (verified with jose
// against the published keys), its claims and lifetimes, userinfo by GET and POST, and every refusal.
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { legacySubject } from '../../src/domain/oidc/claims.js';
import { Agent, consentFields, signIn } from '../support/agent.js';
import { exampleOidcApplication } from '../support/example-seed.js';
import { form, seed, startTestServer, type TestServer } from '../support/server.js';

const oidcApp = { client_id: exampleOidcApplication.clientId, client_secret: exampleOidcApplication.clientSecret, redirect_uri: exampleOidcApplication.redirectUri };

let server: TestServer;
let agent: Agent;
beforeAll(async () => {
  server = await startTestServer({ validateResponses: true });
  agent = new Agent(server.baseUrl);
  expect((await signIn(agent, seed.jsmith.username, seed.jsmith.password)).status).toBe(302);
});
afterAll(() => server?.close());

const token = (params: Record<string, string>) => fetch(`${server.baseUrl}/oauth/token`, form(params));
const clientCredentials = { client_id: oidcApp.client_id, client_secret: oidcApp.client_secret };

/** The signed-in user approves (or the endpoint skips consent); answers the redirect. */
async function authorize(params: Record<string, string>): Promise<URL> {
  const query = new URLSearchParams({ client_id: oidcApp.client_id, redirect_uri: oidcApp.redirect_uri, response_type: 'code', ...params });
  const page = await agent.get(`/oauth/authorize?${query.toString().replace(/\+/g, '%20')}`);
  if (page.status === 302) return new URL(page.headers.get('location')!);
  expect(page.status).toBe(200);
  const approved = await agent.post('/oauth/authorize', { ...consentFields(await page.text()), decision: 'approve' });
  return new URL(approved.headers.get('location')!);
}

async function codeFlow(scope: string, nonce?: string) {
  const callback = await authorize({ scope, state: 'st', ...(nonce === undefined ? {} : { nonce }) });
  const answer = await token({ grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: oidcApp.redirect_uri, ...clientCredentials });
  expect(answer.status).toBe(200);
  return (await answer.json()) as Record<string, string>;
}

async function verify(idToken: string): Promise<JWTPayload> {
  const keys = await (await fetch(`${server.baseUrl}/oauth/discovery/keys`)).json();
  const { payload } = await jwtVerify(idToken, createLocalJWKSet(keys), { issuer: server.baseUrl, audience: oidcApp.client_id, algorithms: ['RS256'], currentDate: new Date(server.now() * 1000) });
  return payload;
}

const userinfo = (accessToken: string, init: RequestInit = {}) =>
  fetch(`${server.baseUrl}/oauth/userinfo`, { ...init, headers: { authorization: `Bearer ${accessToken}`, ...init.headers } });

describe('discovery', () => {
  it('answers the same document under both names, with the OpenID fields the service lists', async () => {
    const [openid, oauth] = await Promise.all(
      ['openid-configuration', 'oauth-authorization-server'].map(async (name) => (await fetch(`${server.baseUrl}/.well-known/${name}`)).json()),
    );
    expect(openid).toEqual(oauth);
    expect(openid).toMatchObject({
      issuer: server.baseUrl,
      userinfo_endpoint: `${server.baseUrl}/oauth/userinfo`,
      jwks_uri: `${server.baseUrl}/oauth/discovery/keys`,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
      claim_types_supported: ['normal'],
      token_endpoint_auth_methods_supported: expect.arrayContaining(['client_secret_basic', 'client_secret_post']),
    });
    expect(openid.scopes_supported).toEqual(expect.arrayContaining(['openid', 'profile', 'email', 'api', 'read_user']));
    for (const claim of ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'sub_legacy', 'groups', 'groups_direct', 'https://gitlab.org/claims/groups/owner']) {
      expect(openid.claims_supported).toContain(claim);
    }
  });
});

describe('the id_token', () => {
  it('comes with the code grant: RS256 under a published key, the nonce, and the claims of the openid scope', async () => {
    const issuedAt = server.now();
    const answer = await codeFlow('openid profile email', 'n-0S6_WzA2Mj');
    expect(answer).toMatchObject({ token_type: 'bearer', scope: 'openid profile email', created_at: expect.any(Number), refresh_token: expect.any(String) });
    expect(decodeProtectedHeader(answer.id_token!)).toEqual({ alg: 'RS256', typ: 'JWT', kid: expect.any(String) });
    const claims = await verify(answer.id_token!);
    const jsmith = (await server.storage.users.byUsername('jsmith'))!;
    expect(claims).toEqual({
      iss: server.baseUrl,
      sub: String(jsmith.id),
      aud: oidcApp.client_id,
      iat: expect.any(Number),
      exp: (claims.iat as number) + 120,
      auth_time: expect.any(Number),
      nonce: 'n-0S6_WzA2Mj',
      sub_legacy: expect.stringMatching(/^[0-9a-f]{64}$/),
      name: 'Jane Smith',
      nickname: 'jsmith',
      preferred_username: 'jsmith',
      email: 'jsmith@example.com',
      email_verified: true,
      profile: `${server.baseUrl}/jsmith`,
      groups_direct: ['acme', 'opensource'],
    });
    expect(claims.iat).toBeGreaterThanOrEqual(issuedAt);
    // The sign-in before this test, not the token's issue.
    expect(claims.auth_time).toBeLessThanOrEqual(claims.iat!);
  });

  it('leaves the address out without the email scope, and the nonce out when none was sent', async () => {
    const claims = await verify((await codeFlow('openid')).id_token!);
    expect(claims).not.toHaveProperty('email');
    expect(claims).not.toHaveProperty('email_verified');
    expect(claims).not.toHaveProperty('nonce');
    expect(claims.preferred_username).toBe('jsmith');
  });

  it('is not issued without openid', async () => {
    const answer = await codeFlow('read_user');
    expect(answer).not.toHaveProperty('id_token');
  });

  it('comes fresh with a refresh: same sub, aud and auth_time, no nonce', async () => {
    const first = await codeFlow('openid email', 'refresh-nonce');
    const before = await verify(first.id_token!);
    server.advance(30);
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token!, ...clientCredentials });
    expect(refreshed.status).toBe(200);
    const body = (await refreshed.json()) as Record<string, string>;
    const after = await verify(body.id_token!);
    expect(after).toMatchObject({ sub: before.sub, aud: before.aud, auth_time: before.auth_time, email: 'jsmith@example.com' });
    expect(after).not.toHaveProperty('nonce');
    // The 30 s the clock was moved, plus the real seconds the refresh took (a second boundary, on a busy machine).
    expect((after.iat as number) - (before.iat as number)).toBeGreaterThanOrEqual(30);
    expect((after.iat as number) - (before.iat as number)).toBeLessThan(35);
  });

  it('comes with the password grant of an authenticated client, with its nonce and auth_time now; never without a client', async () => {
    const answer = await token({ grant_type: 'password', username: 'jsmith', password: seed.jsmith.password, scope: 'openid', nonce: 'pw-nonce', ...clientCredentials });
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as Record<string, string>;
    const claims = await verify(body.id_token!);
    expect(claims).toMatchObject({ nonce: 'pw-nonce', auth_time: claims.iat });
    const anonymous = await token({ grant_type: 'password', username: 'jsmith', password: seed.jsmith.password, scope: 'openid' });
    expect(anonymous.status).toBe(200);
    expect(await anonymous.json()).not.toHaveProperty('id_token');
  });

  it('names a user with a sub_legacy of 64 hex that no one can compute without the instance secret', async () => {
    const claims = await verify((await codeFlow('openid')).id_token!);
    const secret = await server.storage.maintenance.instanceSecret('session_key');
    expect(claims.sub_legacy).toBe(legacySubject(Number(claims.sub), secret));
    expect(claims.sub_legacy).not.toBe(legacySubject(Number(claims.sub), 'another secret'));
  });
});

describe('the authorization request', () => {
  it('refuses a nonce over 255 characters by a redirect with invalid_request', async () => {
    const callback = await authorize({ scope: 'openid', state: 'long', nonce: 'n'.repeat(256) });
    expect(callback.searchParams.get('error')).toBe('invalid_request');
    expect(callback.searchParams.get('error_description')).toMatch(/nonce/);
    expect(callback.searchParams.get('state')).toBe('long');
    expect(callback.searchParams.get('code')).toBeNull();
  });
});

describe('userinfo', () => {
  it('answers the claims by GET and POST, with groups and the role claims, without auth_time or groups_direct', async () => {
    const { access_token } = await codeFlow('openid email');
    const jsmith = (await server.storage.users.byUsername('jsmith'))!;
    for (const init of [{}, { method: 'POST' }]) {
      const answer = await userinfo(access_token!, init);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(await answer.json()).toEqual({
        sub: String(jsmith.id),
        sub_legacy: expect.stringMatching(/^[0-9a-f]{64}$/),
        name: 'Jane Smith',
        nickname: 'jsmith',
        preferred_username: 'jsmith',
        email: 'jsmith@example.com',
        email_verified: true,
        profile: `${server.baseUrl}/jsmith`,
        groups: ['acme', 'opensource'],
        'https://gitlab.org/claims/groups/owner': ['acme', 'opensource'],
      });
    }
    // The token in the query, as the API takes it.
    const viaQuery = await fetch(`${server.baseUrl}/oauth/userinfo?access_token=${access_token}`);
    expect(viaQuery.status).toBe(200);
  });

  it('answers a developer their role claim and no address without the email scope', async () => {
    const awong = (await server.storage.users.byUsername('awong'))!;
    const app = (await server.storage.applications.byUid(oidcApp.client_id))!;
    // awong has two-factor authentication: the pages would ask for a code, so the token comes from the store's grant.
    const { exchangeAuthorizationCode } = await import('../../src/domain/oauth/token-endpoint.js');
    const { approveAuthorization, checkAuthorizationRequest } = await import('../../src/domain/oauth/authorization.js');
    const checked = await checkAuthorizationRequest(server.storage, { client_id: app.uid, redirect_uri: oidcApp.redirect_uri, response_type: 'code', scope: 'openid' });
    if (checked.outcome !== 'valid') throw new Error('refused');
    const code = new URL(await approveAuthorization(server.storage, awong.id, checked.request, { now: server.now(), codeTtl: 600, authTime: server.now() })).searchParams.get('code')!;
    const issued = await exchangeAuthorizationCode({ storage: server.storage, client: app, now: server.now(), tokenTtl: 7200 }, { grant_type: 'authorization_code', code, redirect_uri: oidcApp.redirect_uri });
    const body = await (await userinfo(issued.response.access_token)).json();
    expect(body).toMatchObject({ nickname: 'awong', groups: ['acme'], 'https://gitlab.org/claims/groups/developer': ['acme'] });
    expect(body).not.toHaveProperty('email');
    expect(body).not.toHaveProperty('https://gitlab.org/claims/groups/owner');
  });

  it('refuses no token, a bad one, an expired or revoked one, one without openid, and a personal access token', async () => {
    const none = await fetch(`${server.baseUrl}/oauth/userinfo`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="tokenbell"');
    expect(await none.json()).toMatchObject({ error: 'invalid_token' });

    const bad = await userinfo('not-a-token');
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toBe('Bearer realm="tokenbell", error="invalid_token"');

    const pat = await userinfo(seed.jsmith.pat);
    expect(pat.status).toBe(401);
    const patHeader = await fetch(`${server.baseUrl}/oauth/userinfo`, { headers: { 'private-token': seed.jsmith.pat } });
    expect(patHeader.status).toBe(401);

    const plain = await codeFlow('read_user');
    const noOpenId = await userinfo(plain.access_token!);
    expect(noOpenId.status).toBe(403);
    expect(noOpenId.headers.get('www-authenticate')).toBe('Bearer realm="tokenbell", error="insufficient_scope", scope="openid"');
    expect(await noOpenId.json()).toMatchObject({ error: 'insufficient_scope' });

    const live = await codeFlow('openid');
    const revoked = await fetch(`${server.baseUrl}/oauth/revoke`, form({ token: live.access_token!, ...clientCredentials }));
    expect(revoked.status).toBe(200);
    expect((await userinfo(live.access_token!)).status).toBe(401);

    const expiring = await codeFlow('openid profile');
    server.advance(7200);
    expect((await userinfo(expiring.access_token!)).status).toBe(401);
  });
});

describe('prompt and max_age (Core section 3.1.2.1)', () => {
  const authorizePath = (params: Record<string, string>) =>
    `/oauth/authorize?${new URLSearchParams({ client_id: oidcApp.client_id, redirect_uri: oidcApp.redirect_uri, response_type: 'code', state: 'p-st', ...params }).toString().replace(/\+/g, '%20')}`;
  const redirected = (response: Response) => {
    expect(response.status).toBe(302);
    return new URL(response.headers.get('location')!, server.baseUrl);
  };
  const refusedWith = (location: URL, error: string) => {
    expect(location.origin + location.pathname).toBe(oidcApp.redirect_uri);
    expect(Object.fromEntries(location.searchParams)).toEqual({ error, error_description: expect.any(String), state: 'p-st' });
  };

  it('prompt=consent shows the consent page although the consent is given already', async () => {
    await codeFlow('openid profile');
    expect(redirected(await agent.get(authorizePath({ scope: 'openid profile' }))).searchParams.get('code')).toEqual(expect.any(String));
    const page = await agent.get(authorizePath({ scope: 'openid profile', prompt: 'consent' }));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<h1>Authorize Example OIDC App to use your account?</h1>');
  });

  it('prompt=none shows no page: a code when the consent is given, consent_required when not, login_required for nobody', async () => {
    await codeFlow('openid email');
    const code = redirected(await agent.get(authorizePath({ scope: 'openid email', prompt: 'none' })));
    expect(code.searchParams.get('state')).toBe('p-st');
    expect(code.searchParams.get('code')).toEqual(expect.any(String));

    const mallory = new Agent(server.baseUrl);
    expect((await signIn(mallory, seed.mallory.username, seed.mallory.password)).status).toBe(302);
    refusedWith(redirected(await mallory.get(authorizePath({ scope: 'openid', prompt: 'none' }))), 'consent_required');
    refusedWith(redirected(await new Agent(server.baseUrl).get(authorizePath({ scope: 'openid', prompt: 'none' }))), 'login_required');
  });

  it('prompt=login and max_age ask again a user who signed in before, and the id_token says when they did', async () => {
    const returning = new Agent(server.baseUrl);
    expect((await signIn(returning, seed.jsmith.username, seed.jsmith.password)).status).toBe(302);
    await codeFlow('openid');
    for (const demand of [{ prompt: 'login' }, { max_age: '60' }] as Record<string, string>[]) {
      server.advance(3600);
      const sent = redirected(await returning.get(authorizePath({ scope: 'openid', ...demand })));
      expect(sent.pathname).toBe('/users/sign_in');
      const returnTo = sent.searchParams.get('return_to')!;
      // The way back does not ask again, or the user would sign in for ever.
      expect(returnTo).not.toMatch(/prompt=|max_age=/);
      // With prompt=none, an old sign-in is a refusal rather than a page.
      if ('max_age' in demand) refusedWith(redirected(await returning.get(authorizePath({ scope: 'openid', prompt: 'none', ...demand }))), 'login_required');

      expect((await signIn(returning, seed.jsmith.username, seed.jsmith.password)).status).toBe(302);
      const signedInAt = server.now();
      const back = redirected(await returning.get(returnTo));
      const answer = await token({ grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: oidcApp.redirect_uri, ...clientCredentials });
      expect((await verify(((await answer.json()) as { id_token: string }).id_token)).auth_time, JSON.stringify(demand)).toBe(signedInAt);
    }
  });

  it('refuses prompt=none with another value, an unknown value and a max_age that is no number, by a redirect', async () => {
    for (const params of [{ prompt: 'none login' }, { prompt: 'create' }, { max_age: 'soon' }] as Record<string, string>[]) {
      const location = redirected(await agent.get(authorizePath({ scope: 'openid', ...params })));
      expect(location.searchParams.get('error'), JSON.stringify(params)).toBe('invalid_request');
    }
  });
});
