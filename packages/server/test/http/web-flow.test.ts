// The browser-facing flow over real HTTP: sign-in, consent, applications and personal access tokens, driven with
// fetch, a small cookie jar and manual redirects, as a browser would.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/domain/accounts.js';
import { digest } from '../../src/domain/secrets.js';
import { currentCode } from '../support/two-factor.js';
import { document } from '../../src/openapi/document.js';
import { Agent, consentFields, csrfOf } from '../support/agent.js';
import { seed, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());


const location = (response: Response) => response.headers.get('location') ?? '';

type Credentials = { username: string; password: string; otp_secret?: string };

async function signIn(agent: Agent, user: Credentials = seed.jsmith, returnTo?: string) {
  const page = await (await agent.get(returnTo ? `/users/sign_in?${query({ return_to: returnTo })}` : '/users/sign_in')).text();
  let response = await agent.post('/users/sign_in', {
    _csrf: csrfOf(page),
    login: user.username,
    password: user.password,
    ...(returnTo ? { return_to: returnTo } : {}),
  });
  if (user.otp_secret) {
    expect(response.status).toBe(200);
    response = await agent.post('/users/sign_in', {
      _csrf: csrfOf(await response.text()),
      otp_attempt: currentCode(user.otp_secret, server.now()),
      ...(returnTo ? { return_to: returnTo } : {}),
    });
  }
  expect(response.status).toBe(302);
  return response;
}

/** Percent-encodes every reserved character: the validator refuses "+" and other reserved characters in query values. */
const query = (params: Record<string, string>) =>
  Object.entries(params)
    .map(([k, v]) => `${k}=${encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`)
    .join('&');
const authorizeUrl = (params: Record<string, string>) => `/oauth/authorize?${query(params)}`;
const baseParams = { client_id: seed.client.id, redirect_uri: seed.redirectUri, response_type: 'code' };

const exchange = async (code: string, extra: Record<string, string> = {}, client: { id: string; secret: string } = seed.client, redirectUri = seed.redirectUri) => {
  const response = await fetch(`${server.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: client.id, client_secret: client.secret, ...extra }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

/**
 * Revokes what the seed's client holds for jsmith: earlier tests leave live tokens, and with one of the same scopes the
 * endpoint skips the consent page (as the service does), where these tests need it.
 */
async function forgetAuthorizations(username = seed.jsmith.username) {
  const user = (await server.storage.users.byUsername(username))!;
  const client = (await server.storage.applications.byUid(seed.client.id))!;
  await server.storage.tokens.revokeAuthorization(user.id, client.id, server.now());
}

const currentUser = (headers: Record<string, string>) => fetch(`${server.baseUrl}/api/v3/user`, { headers });

describe('the web application flow', () => {
  it('goes from authorize through sign-in and consent to a code, a token and the API', async () => {
    const agent = new Agent(server.baseUrl);
    const authorize = authorizeUrl({ ...baseParams, state: 'st&te "1"', scope: 'read_user' });

    const first = await agent.get(authorize);
    expect(first.status).toBe(302);
    const signInUrl = new URL(location(first), server.baseUrl);
    expect(signInUrl.pathname).toBe('/users/sign_in');
    expect(signInUrl.searchParams.get('return_to')).toBe(authorize);

    const signInPage = await agent.get(signInUrl.pathname + signInUrl.search);
    expect(signInPage.status).toBe(200);
    const signInHtml = await signInPage.text();
    expect(signInHtml).toContain(`name="return_to" value="${authorize.replace(/&/g, '&amp;')}"`);
    const signedIn = await agent.post('/users/sign_in', {
      _csrf: csrfOf(signInHtml),
      login: 'jsmith@example.com',
      password: seed.jsmith.password,
      return_to: authorize,
    });
    expect(signedIn.status).toBe(302);
    expect(location(signedIn)).toBe(authorize);

    const consent = await agent.get(location(signedIn));
    expect(consent.status).toBe(200);
    expect(consent.headers.get('content-type')).toMatch(/^text\/html/);
    const page = await consent.text();
    expect(page).toContain('<h1>Authorize Example App to use your account?</h1>');
    expect(page).toContain('read_user');
    expect(page).not.toContain('<code>api</code>');
    expect(page).toMatch(/<button type="submit" name="decision" value="approve">Authorize<\/button>/);
    expect(page).toMatch(/<button type="submit" name="decision" value="deny"[^>]*>Deny<\/button>/);

    const fields = consentFields(page);
    expect(fields).toMatchObject({ ...baseParams, state: 'st&te "1"', scope: 'read_user' });
    const approved = await agent.post('/oauth/authorize', { ...fields, decision: 'approve' });
    expect(approved.status).toBe(302);
    const callback = new URL(location(approved));
    expect(`${callback.origin}${callback.pathname}`).toBe(seed.redirectUri);
    expect(callback.searchParams.get('state')).toBe('st&te "1"');
    const code = callback.searchParams.get('code')!;
    expect(code).toBeTruthy();

    const token = await exchange(code);
    expect(token.status).toBe(200);
    expect(token.body.scope).toBe('read_user');
    const me = await currentUser({ authorization: `Bearer ${token.body.access_token}` });
    expect(me.status).toBe(200);
    expect((await me.json()).username).toBe('jsmith');
  });

  it('redirects with access_denied and the state when the user denies', async () => {
    const agent = new Agent(server.baseUrl);
    await signIn(agent);
    const page = await (await agent.get(authorizeUrl({ ...baseParams, state: 'abc' }))).text();
    const denied = await agent.post('/oauth/authorize', { ...consentFields(page), decision: 'deny' });
    expect(denied.status).toBe(302);
    const callback = new URL(location(denied));
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('state')).toBe('abc');
    expect(callback.searchParams.has('code')).toBe(false);
  });

  it.each([
    ['an unknown client_id', { ...baseParams, client_id: 'no-such-client' }, 'unknown client'],
    ['an unregistered redirect_uri', { ...baseParams, redirect_uri: 'https://evil.example/callback' }, 'redirect URI'],
  ])('answers %s with a 400 page and never redirects', async (_name, params, message) => {
    for (const agent of [new Agent(server.baseUrl), await signedInAgent()]) {
      const response = await agent.get(authorizeUrl({ ...params, state: 'x' }));
      expect(response.status).toBe(400);
      expect(response.headers.get('location')).toBeNull();
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await response.text()).toContain(message);
    }
  });

  it.each([
    ['an unsupported response_type', { response_type: 'token' }, 'unsupported_response_type'],
    ['an unknown scope', { scope: 'admin' }, 'invalid_scope'],
    ['a plain PKCE challenge', { code_challenge: 'abc', code_challenge_method: 'plain' }, 'invalid_request'],
  ])('never sends an anonymous visitor to the client for %s; sign-in first, then the error redirect', async (_name, extra, error) => {
    const agent = new Agent(server.baseUrl);
    const anonymous = await agent.get(authorizeUrl({ ...baseParams, ...extra, state: 's1' }));
    expect(anonymous.status).toBe(302);
    const signInUrl = new URL(location(anonymous), server.baseUrl);
    expect(signInUrl.origin).toBe(server.baseUrl);
    expect(signInUrl.pathname).toBe('/users/sign_in');

    const back = await signIn(agent, seed.jsmith, signInUrl.searchParams.get('return_to')!);
    const response = await agent.get(location(back));
    expect(response.status).toBe(302);
    const callback = new URL(location(response));
    expect(`${callback.origin}${callback.pathname}`).toBe(seed.redirectUri);
    expect(callback.searchParams.get('error')).toBe(error);
    expect(callback.searchParams.get('state')).toBe('s1');
  });

  it('carries a PKCE S256 challenge through sign-in and consent to the token endpoint', async () => {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const agent = new Agent(server.baseUrl);
    const authorize = authorizeUrl({ ...baseParams, state: 'pkce', code_challenge: challenge, code_challenge_method: 'S256' });
    const toSignIn = await agent.get(authorize);
    const returnTo = new URL(location(toSignIn), server.baseUrl).searchParams.get('return_to')!;
    const back = await signIn(agent, seed.jsmith, returnTo);
    const fields = consentFields(await (await agent.get(location(back))).text());
    expect(fields).toMatchObject({ code_challenge: challenge, code_challenge_method: 'S256' });
    const approved = await agent.post('/oauth/authorize', { ...fields, decision: 'approve' });
    const code = new URL(location(approved)).searchParams.get('code')!;

    expect((await exchange(code)).body.error).toBe('invalid_grant');
    const code2 = new URL(location(await agent.post('/oauth/authorize', { ...fields, decision: 'approve' }))).searchParams.get('code')!;
    const token = await exchange(code2, { code_verifier: verifier });
    expect(token.status).toBe(200);
  });

  it('refuses a consent post without or with a wrong CSRF token, issuing no code', async () => {
    await forgetAuthorizations();
    const agent = await signedInAgent();
    const fields = consentFields(await (await agent.get(authorizeUrl({ ...baseParams, state: 'c' }))).text());
    const codesBefore = await server.count('authorization_codes');
    const { _csrf: _dropped, ...withoutToken } = fields;
    for (const body of [withoutToken, { ...fields, _csrf: 'f'.repeat(256) }]) {
      const response = await agent.post('/oauth/authorize', { ...body, decision: 'approve' });
      expect(response.status).toBe(403);
      expect(response.headers.get('location')).toBeNull();
      const page = await response.text();
      expect(page).toContain('<h1>This form has expired</h1>');
    }
    // Another session's token is no good either.
    const other = await signedInAgent();
    const otherToken = csrfOf(await (await other.get('/profile/applications')).text());
    expect((await agent.post('/oauth/authorize', { ...fields, _csrf: otherToken, decision: 'approve' })).status).toBe(403);
    expect(await server.count('authorization_codes')).toBe(codesBefore);
  });

  it('skips the consent page while the user holds a live token of this confidential client with exactly these scopes', async () => {
    await forgetAuthorizations();
    const agent = await signedInAgent();
    const params = { ...baseParams, scope: 'api read_user', state: 'skip' };
    const first = await agent.get(authorizeUrl(params));
    expect(first.status).toBe(200);
    const approved = await agent.post('/oauth/authorize', { ...consentFields(await first.text()), decision: 'approve' });
    const issued = await exchange(new URL(location(approved)).searchParams.get('code')!);
    expect(issued.status).toBe(200);

    // Same scopes, in another order: a code at once, and it works.
    const again = await agent.get(authorizeUrl({ ...params, scope: 'read_user api' }));
    expect(again.status).toBe(302);
    const redirect = new URL(location(again));
    expect(redirect.searchParams.get('state')).toBe('skip');
    expect((await exchange(redirect.searchParams.get('code')!)).status).toBe(200);
    // Other scopes: the page again.
    expect((await agent.get(authorizeUrl({ ...params, scope: 'api' }))).status).toBe(200);
    // Expired tokens earn nothing: past their lifetime the page is back.
    server.advance(issued.body.expires_in as number);
    expect((await agent.get(authorizeUrl(params))).status).toBe(200);
  });

  it('sends a consent post without a session to sign in, and back to the same request', async () => {
    const response = await new Agent(server.baseUrl).post('/oauth/authorize', { ...baseParams, state: 'q', _csrf: 'x', decision: 'approve' });
    expect(response.status).toBe(302);
    const target = new URL(location(response), server.baseUrl);
    expect(target.pathname).toBe('/users/sign_in');
    const returnTo = new URL(target.searchParams.get('return_to')!, server.baseUrl);
    expect(returnTo.pathname).toBe('/oauth/authorize');
    expect(Object.fromEntries(returnTo.searchParams)).toEqual({ ...baseParams, state: 'q' });
  });
});

async function signedInAgent(user: Credentials = seed.jsmith) {
  const agent = new Agent(server.baseUrl);
  await signIn(agent, user);
  return agent;
}

describe('two-factor sign-in', () => {
  /** Posts the right password of `user`; answers the agent and the page that came back. */
  async function passwordStep(user: Credentials = seed.awong) {
    const agent = new Agent(server.baseUrl);
    const page = await (await agent.get('/users/sign_in')).text();
    const response = await agent.post('/users/sign_in', { _csrf: csrfOf(page), login: user.username, password: user.password });
    return { agent, response, page: await response.text() };
  }
  const codeStep = (agent: Agent, page: string, otp_attempt: string) => agent.post('/users/sign_in', { _csrf: csrfOf(page), otp_attempt });
  const isSignedIn = async (agent: Agent) => (await agent.get('/profile/applications')).status === 200;

  it('asks for the code after the right password, and signs in only with it', async () => {
    const { agent, response, page } = await passwordStep();
    expect(response.status).toBe(200);
    expect(page).toContain('name="otp_attempt"');
    expect(page).not.toContain(seed.awong.password);
    expect(await isSignedIn(agent)).toBe(false);

    const wrong = await codeStep(agent, page, String((Number(currentCode(seed.awong.otp_secret, server.now())) + 1) % 1_000_000).padStart(6, '0'));
    expect(wrong.status).toBe(401);
    const retry = await wrong.text();
    expect(retry).toContain('Invalid code.');
    expect(await isSignedIn(agent)).toBe(false);

    const sidBefore = agent.sid;
    const right = await codeStep(agent, retry, currentCode(seed.awong.otp_secret, server.now()));
    expect(right.status).toBe(302);
    expect(agent.sid).not.toBe(sidBefore);
    expect(await isSignedIn(agent)).toBe(true);
  });

  it('takes each code once, even from another session', async () => {
    server.advance(60);
    const code = currentCode(seed.awong.otp_secret, server.now());
    const first = await passwordStep();
    expect((await codeStep(first.agent, first.page, code)).status).toBe(302);
    const second = await passwordStep();
    const replay = await codeStep(second.agent, second.page, code);
    expect(replay.status).toBe(401);
    expect(await isSignedIn(second.agent)).toBe(false);
  });

  it('accepts a code from the step before or after (clocks apart), not from further away', async () => {
    server.advance(120);
    const { agent, page } = await passwordStep();
    const far = await codeStep(agent, page, currentCode(seed.awong.otp_secret, server.now() - 90));
    expect(far.status).toBe(401);
    expect((await codeStep(agent, await far.text(), currentCode(seed.awong.otp_secret, server.now() + 30))).status).toBe(302);
  });

  it('needs the password step first, in the same session, within 5 minutes', async () => {
    server.advance(120);
    const anonymous = new Agent(server.baseUrl);
    const page = await (await anonymous.get('/users/sign_in')).text();
    const unstarted = await codeStep(anonymous, page, currentCode(seed.awong.otp_secret, server.now()));
    expect(unstarted.status).toBe(401);
    expect(await unstarted.text()).toContain('Enter your login and password again');

    const { agent, page: codePage } = await passwordStep();
    server.advance(301);
    const late = await codeStep(agent, codePage, currentCode(seed.awong.otp_secret, server.now()));
    expect(late.status).toBe(401);
    expect(await isSignedIn(agent)).toBe(false);
  });

  it('refuses the pages to a two-factor account that has no authenticator secret, saying why', async () => {
    await createUser(server.storage, { username: 'nosecret', email: 'nosecret@example.com', name: 'No Secret', password: 'a long enough password', two_factor_enabled: true });
    const { agent, response, page } = await passwordStep({ username: 'nosecret', password: 'a long enough password' });
    expect(response.status).toBe(401);
    expect(page).toContain('no authenticator is registered');
    expect(await isSignedIn(agent)).toBe(false);
  });
});

describe('sign-in and sessions', () => {
  it('starts the session only at sign-in, with an httpOnly, SameSite=Lax cookie; the form before it has only a CSRF cookie', async () => {
    const agent = new Agent(server.baseUrl);
    const page = await agent.get('/users/sign_in');
    expect(agent.lastSetCookies.find((c) => c.startsWith('tokenbell.sid='))).toBeUndefined();
    const csrfCookie = agent.lastSetCookies.find((c) => c.startsWith('tokenbell.csrf='));
    expect(csrfCookie).toMatch(/;\s*HttpOnly/i);
    expect(csrfCookie).toMatch(/;\s*SameSite=Lax/i);
    const response = await agent.post('/users/sign_in', { _csrf: csrfOf(await page.text()), login: 'jsmith', password: seed.jsmith.password });
    expect(response.status).toBe(302);
    expect(location(response)).toBe('/profile/applications');
    const cookie = agent.lastSetCookies.find((c) => c.startsWith('tokenbell.sid='));
    expect(cookie).toMatch(/;\s*HttpOnly/i);
    expect(cookie).toMatch(/;\s*SameSite=Lax/i);
    expect(cookie).toMatch(/;\s*Path=\//i);
    expect(cookie).not.toMatch(/;\s*Secure/i);
    const sidOf = (cookie: string) => decodeURIComponent(cookie).replace(/^s:/, '').split('.')[0]!;
    // Found whatever its expiry (at time 0): the stored record, as the file store's lookup found it.
    expect((await server.storage.sessions.find(digest(sidOf(agent.sid!)), 0))?.userId).toBe((await server.storage.users.byUsername('jsmith'))!.id);
  });

  it('gives a session id planted before sign-in no worth: sign-in answers with a new one', async () => {
    const victim = new Agent(server.baseUrl);
    await signIn(victim);
    const planted = victim.sid!;
    await victim.post('/users/sign_out', { _csrf: csrfOf(await (await victim.get('/profile/applications')).text()) });
    const agent = new Agent(server.baseUrl);
    agent.cookies.set('tokenbell.sid', planted);
    await signIn(agent);
    expect(agent.sid).toBeDefined();
    expect(agent.sid).not.toBe(planted);
  });

  it('answers wrong credentials with a 401 page and one message, whatever was wrong', async () => {
    const messages = new Set<string>();
    for (const [login, password] of [
      ['jsmith', 'wrong'],
      ['nobody', 'wrong'],
      ['mallory@example.com', seed.jsmith.password],
    ]) {
      const agent = new Agent(server.baseUrl);
      const page = await (await agent.get('/users/sign_in')).text();
      const response = await agent.post('/users/sign_in', { _csrf: csrfOf(page), login: login!, password: password! });
      expect(response.status).toBe(401);
      const body = await response.text();
      expect(body).toContain('<form method="post" action="/users/sign_in">');
      messages.add(/role="alert">([^<]*)</.exec(body)![1]!);
    }
    expect([...messages]).toEqual(['Invalid login or password.']);
  });

  it('refuses a sign-in post without a session or CSRF token', async () => {
    const response = await new Agent(server.baseUrl).post('/users/sign_in', { _csrf: 'x', login: 'jsmith', password: seed.jsmith.password });
    expect(response.status).toBe(403);
    expect(response.headers.get('location')).toBeNull();
  });

  it.each(['//evil.example', 'https://evil.example', '/\\evil.example', '/\t/evil.example', 'javascript:alert(1)'])(
    'ignores the return_to %j and ends on a local page',
    async (returnTo) => {
      const agent = new Agent(server.baseUrl);
      const page = await (await agent.get(`/users/sign_in?${query({ return_to: returnTo })}`)).text();
      expect(page).not.toContain('name="return_to"');
      const response = await agent.post('/users/sign_in', {
        _csrf: csrfOf(page),
        login: 'jsmith',
        password: seed.jsmith.password,
        return_to: returnTo,
      });
      expect(response.status).toBe(302);
      expect(location(response)).toBe('/profile/applications');
    },
  );

  it('signs out: the session ends and its cookie no longer works', async () => {
    const agent = await signedInAgent();
    const stolen = agent.sid!;
    const page = await (await agent.get('/profile/applications')).text();
    const response = await agent.post('/users/sign_out', { _csrf: csrfOf(page) });
    expect(response.status).toBe(302);
    expect(location(response)).toBe('/users/sign_in');
    const replay = new Agent(server.baseUrl);
    replay.cookies.set('tokenbell.sid', stolen);
    const after = await replay.get('/profile/applications');
    expect(after.status).toBe(302);
    expect(location(after)).toMatch(/^\/users\/sign_in\?return_to=/);
  });

  it('sends pages their security headers and keeps cookies off the API and the JSON OAuth endpoints', async () => {
    await forgetAuthorizations();
    const agent = await signedInAgent();
    for (const path of ['/users/sign_in', '/profile/applications', authorizeUrl(baseParams)]) {
      const response = await agent.get(path);
      expect(response.status).toBe(200);
      const csp = response.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'none'");
      expect(csp).toContain("style-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toMatch(/form-action 'self'/);
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
    const consent = await agent.get(authorizeUrl(baseParams));
    expect(consent.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:8080;");
    const css = await fetch(`${server.baseUrl}/assets/tokenbell.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);

    const api = await fetch(`${server.baseUrl}/api/v3/user`, { headers: { 'private-token': seed.jsmith.pat, cookie: `tokenbell.sid=${agent.sid}` } });
    expect(api.status).toBe(200);
    expect(api.headers.getSetCookie()).toEqual([]);
    expect(api.headers.get('content-security-policy')).toBeNull();
    const metadata = await fetch(`${server.baseUrl}/.well-known/oauth-authorization-server`);
    expect(metadata.headers.getSetCookie()).toEqual([]);
  });

  it('sends a visitor without a session from a profile page to sign in and back', async () => {
    const response = await new Agent(server.baseUrl).get('/profile/personal_access_tokens');
    expect(response.status).toBe(302);
    expect(location(response)).toBe(`/users/sign_in?return_to=${encodeURIComponent('/profile/personal_access_tokens')}`);
  });
});

describe('the applications page', () => {
  it('registers an application, shows its secret once and keeps only a digest', async () => {
    const agent = await signedInAgent();
    const page = await (await agent.get('/profile/applications')).text();
    expect(page).toContain('Example App');
    expect(page).toContain(seed.client.id);
    const created = await agent.post('/profile/applications', {
      _csrf: csrfOf(page),
      name: 'My <Tool>',
      redirect_uri: 'https://tool.example/cb\r\n\r\ncom.example.tool:/oauth\r\n',
      scopes: ['read_api', 'read_user'],
    });
    expect(created.status).toBe(201);
    const createdPage = await created.text();
    expect(createdPage).toContain('My &lt;Tool&gt;');
    const appId = /id="app-id" type="text" readonly value="([^"]+)"/.exec(createdPage)![1]!;
    const secret = /id="app-secret" type="text" readonly value="([^"]+)"/.exec(createdPage)![1]!;
    const record = (await server.storage.applications.byUid(appId))!;
    expect(record).toMatchObject({ name: 'My <Tool>', redirect_uris: ['https://tool.example/cb', 'com.example.tool:/oauth'], scopes: ['read_api', 'read_user'] });

    const list = await (await agent.get('/profile/applications')).text();
    expect(list).toContain(appId);
    expect(list).not.toContain(secret);
    expect(await server.dump()).not.toContain(secret);

    const token = await fetch(`${server.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', username: 'mallory', password: seed.mallory.password, client_id: appId, client_secret: secret }),
    });
    expect(token.status).toBe(200);

    const deleted = await agent.post(`/profile/applications/${record.id}/delete`, { _csrf: csrfOf(list) });
    expect(deleted.status).toBe(302);
    expect(location(deleted)).toBe('/profile/applications');
    expect(await server.storage.applications.byUid(appId)).toBeUndefined();
    expect(await (await agent.get('/profile/applications')).text()).not.toContain(appId);
  });

  it('accepts a single scope checkbox and defaults to api without one', async () => {
    const agent = await signedInAgent(seed.mallory);
    const csrf = csrfOf(await (await agent.get('/profile/applications')).text());
    const one = await agent.post('/profile/applications', { _csrf: csrf, name: 'One', redirect_uri: 'https://one.example/cb', scopes: 'read_user' });
    expect(one.status).toBe(201);
    const none = await agent.post('/profile/applications', { _csrf: csrf, name: 'None', redirect_uri: 'https://none.example/cb' });
    expect(none.status).toBe(201);
    const mallory = (await server.storage.users.byUsername('mallory'))!;
    const mine = await server.storage.applications.ownedBy(mallory.id);
    expect(mine.map((a) => [a.name, a.scopes])).toEqual([
      ['One', ['read_user']],
      ['None', ['api']],
    ]);
  });

  it.each([
    [{ name: ' ', redirect_uri: 'https://a.example/cb' }, 'Name must not be blank'],
    [{ name: 'Frag', redirect_uri: 'https://a.example/cb#x' }, 'fragment'],
    [{ name: 'Rel', redirect_uri: '/relative' }, 'not an absolute URI'],
    [{ name: 'Js', redirect_uri: 'javascript:alert(1)' }, 'forbidden scheme'],
  ])('shows the form again with a message for %j', async (fields, message) => {
    const agent = await signedInAgent();
    const csrf = csrfOf(await (await agent.get('/profile/applications')).text());
    const count = await server.count('applications');
    const response = await agent.post('/profile/applications', { _csrf: csrf, ...fields });
    expect(response.status).toBe(400);
    const page = await response.text();
    expect(page).toContain(message);
    expect(page).toContain('<form method="post" action="/profile/applications"');
    expect(await server.count('applications')).toBe(count);
  });

  it('refuses fields the document does not declare, an unknown scope and a forged form', async () => {
    const agent = await signedInAgent();
    const csrf = csrfOf(await (await agent.get('/profile/applications')).text());
    const base = { _csrf: csrf, name: 'X', redirect_uri: 'https://x.example/cb' };
    expect((await agent.post('/profile/applications', { ...base, scopes: 'admin' })).status).toBe(400);
    // The document closes the form schemas: the App ID and Secret are never the caller's choice.
    const chosen = 'chosen-by-the-attacker-0000';
    const extra = await agent.post('/profile/applications', { ...base, secret: chosen, uid: 'chosen-uid' });
    expect(extra.status).toBe(400);
    expect(await extra.text()).not.toContain(chosen);
    expect(await server.storage.applications.byUid('chosen-uid')).toBeUndefined();
    expect((await agent.post('/profile/applications', { ...base, _csrf: 'nope' })).status).toBe(403);
  });

  it("answers 404 for someone else's application or an unknown one, and changes nothing", async () => {
    const agent = await signedInAgent(seed.mallory);
    const csrf = csrfOf(await (await agent.get('/profile/applications')).text());
    const example = (await server.storage.applications.byUid(seed.client.id))!;
    for (const path of [`/profile/applications/${example.id}/delete`, '/profile/applications/999999/delete']) {
      const response = await agent.post(path, { _csrf: csrf });
      expect(response.status).toBe(404);
      expect(await response.text()).toContain('<h1>Page not found</h1>');
    }
    expect(await server.storage.applications.byUid(seed.client.id)).toBeDefined();
  });

  it('lists an authorized application and revoking it kills its tokens', async () => {
    const agent = await signedInAgent(seed.mallory);
    const fields = consentFields(await (await agent.get(authorizeUrl({ ...baseParams, state: 'r' }))).text());
    const code = new URL(location(await agent.post('/oauth/authorize', { ...fields, decision: 'approve' }))).searchParams.get('code')!;
    const token = await exchange(code);
    const bearer = { authorization: `Bearer ${token.body.access_token}` };
    expect((await currentUser(bearer)).status).toBe(200);

    const page = await (await agent.get('/profile/applications')).text();
    const authorized = page.slice(page.indexOf('id="authorized-applications"'));
    expect(authorized).toContain('Example App');
    const example = (await server.storage.applications.byUid(seed.client.id))!;
    expect(authorized).toContain(`action="/profile/authorized_applications/${example.id}/revoke"`);

    const revoked = await agent.post(`/profile/authorized_applications/${example.id}/revoke`, { _csrf: csrfOf(page) });
    expect(revoked.status).toBe(302);
    expect(location(revoked)).toBe('/profile/applications');
    expect((await currentUser(bearer)).status).toBe(401);
    const refreshed = await fetch(`${server.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: String(token.body.refresh_token), client_id: seed.client.id, client_secret: seed.client.secret }),
    });
    expect(refreshed.status).toBe(400);
    const after = await (await agent.get('/profile/applications')).text();
    expect(after.slice(after.indexOf('id="authorized-applications"'))).not.toContain('Example App');
    // Nothing left to revoke, and jsmith's own authorizations were not touched by mallory's revocation.
    expect((await agent.post(`/profile/authorized_applications/${example.id}/revoke`, { _csrf: csrfOf(after) })).status).toBe(404);
  });
});

describe('the personal access tokens page', () => {
  it('creates a token shown once that works on the API, then revokes it', async () => {
    const agent = await signedInAgent();
    const page = await (await agent.get('/profile/personal_access_tokens')).text();
    expect(page).toContain('laptop');
    expect(page).not.toContain(seed.jsmith.pat);
    const created = await agent.post('/profile/personal_access_tokens', { _csrf: csrfOf(page), name: 'cli', expires_at: '2099-01-31', scopes: ['read_user'] });
    expect(created.status).toBe(201);
    const value = /id="token-value" type="text" readonly value="([^"]+)"/.exec(await created.text())![1]!;
    const me = await currentUser({ 'private-token': value });
    expect(me.status).toBe(200);
    expect((await me.json()).username).toBe('jsmith');
    expect(await server.dump()).not.toContain(value);

    const list = await (await agent.get('/profile/personal_access_tokens')).text();
    expect(list).not.toContain(value);
    expect(list).toContain('2099-01-31');
    const record = (await server.storage.personalAccessTokens.ofUser((await server.storage.users.byUsername('jsmith'))!.id)).find((t) => t.name === 'cli')!;
    const revoked = await agent.post(`/profile/personal_access_tokens/${record.id}/revoke`, { _csrf: csrfOf(list) });
    expect(revoked.status).toBe(302);
    expect(location(revoked)).toBe('/profile/personal_access_tokens');
    expect((await currentUser({ 'private-token': value })).status).toBe(401);
    expect(await (await agent.get('/profile/personal_access_tokens')).text()).toContain('Revoked');
  });

  it('creates a token without expiry from an empty date field, and refuses bad input', async () => {
    const agent = await signedInAgent(seed.mallory);
    const csrf = csrfOf(await (await agent.get('/profile/personal_access_tokens')).text());
    const created = await agent.post('/profile/personal_access_tokens', { _csrf: csrf, name: 'forever', expires_at: '', scopes: 'api' });
    expect(created.status).toBe(201);
    const mallory = (await server.storage.users.byUsername('mallory'))!;
    expect((await server.storage.personalAccessTokens.ofUser(mallory.id)).find((t) => t.name === 'forever')).toMatchObject({ expires_at: null, scopes: ['api'] });
    const bad = await agent.post('/profile/personal_access_tokens', { _csrf: csrf, name: 'x', expires_at: '2099-02-30' });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('is not a date');
  });

  it("answers 404 for someone else's token", async () => {
    const agent = await signedInAgent(seed.mallory);
    const csrf = csrfOf(await (await agent.get('/profile/personal_access_tokens')).text());
    const jsmith = (await server.storage.users.byUsername('jsmith'))!;
    const laptop = async () => (await server.storage.personalAccessTokens.ofUser(jsmith.id)).find((t) => t.name === 'laptop')!;
    expect((await agent.post(`/profile/personal_access_tokens/${(await laptop()).id}/revoke`, { _csrf: csrf })).status).toBe(404);
    // Read again: the record as stored after the request, not the one read before it.
    expect((await laptop()).revoked).toBe(false);
  });
});

describe('the rendered forms', () => {
  // The validator checks every posted form against the document, so each form must send only fields the
  // document declares for its action, and every field it requires.
  const paths = document.paths as Record<string, { post?: { requestBody?: { content: Record<string, { schema: { $ref?: string } }> } } }>;
  const schemaFor = (action: string) => {
    const entry = Object.entries(paths).find(([template]) => new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(action));
    const ref = entry?.[1].post?.requestBody?.content['application/x-www-form-urlencoded']?.schema.$ref;
    if (!ref) throw new Error(`the document declares no form for POST ${action}`);
    type FormSchema = { properties: Record<string, unknown>; required: string[] };
    const named = (r: string) => document.components.schemas[r.split('/').pop()!] as FormSchema & { oneOf?: Array<{ $ref: string }> };
    const schema = named(ref);
    // A form with steps (sign-in) is one of several shapes; each step's form must be exactly one of them.
    return schema.oneOf ? schema.oneOf.map((branch) => named(branch.$ref)) : [schema];
  };
  const formsOf = (page: string) =>
    [...page.matchAll(/<form method="post" action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/g)].map((m) => ({
      action: m[1]!,
      names: new Set([...m[2]!.matchAll(/<(?:input|textarea|button)\b[^>]*\bname="([^"]+)"/g)].map((n) => n[1]!)),
    }));

  it('send exactly the fields the document declares', async () => {
    const anonymous = new Agent(server.baseUrl);
    const pages = [await (await anonymous.get(`/users/sign_in?${query({ return_to: '/profile/applications' })}`)).text()];
    // The code step of a two-factor sign-in.
    pages.push(await (await anonymous.post('/users/sign_in', { _csrf: csrfOf(pages[0]!), login: seed.awong.username, password: seed.awong.password })).text());
    const agent = await signedInAgent(seed.awong);
    const consent = await (await agent.get(authorizeUrl({ ...baseParams, state: 's', scope: 'api', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' }))).text();
    pages.push(consent);
    const code = new URL(location(await agent.post('/oauth/authorize', { ...consentFields(consent), decision: 'approve' }))).searchParams.get('code')!;
    expect((await exchange(code, { code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk' })).status).toBe(200);
    const csrf = csrfOf(consent);
    await agent.post('/profile/applications', { _csrf: csrf, name: 'Mine', redirect_uri: 'https://mine.example/cb' });
    pages.push(await (await agent.get('/profile/applications')).text(), await (await agent.get('/profile/personal_access_tokens')).text());

    const seen = new Set<string>();
    for (const form of pages.flatMap(formsOf)) {
      seen.add(form.action.replace(/\d+/g, ':id'));
      const fits = schemaFor(form.action).filter(
        (schema) => [...form.names].every((name) => name in schema.properties) && schema.required.every((name) => form.names.has(name)),
      );
      expect(fits, `${form.action} sends ${[...form.names].join(', ')}`).toHaveLength(1);
    }
    expect([...seen].sort()).toEqual([
      '/oauth/authorize',
      '/profile/applications',
      '/profile/applications/:id/delete',
      '/profile/authorized_applications/:id/revoke',
      '/profile/personal_access_tokens',
      '/profile/personal_access_tokens/:id/revoke',
      '/users/sign_in',
      '/users/sign_out',
    ]);
  });
});

describe('authorization requests as ordinary clients encode them', () => {
  it('accepts unencoded reserved characters and + for spaces (allowReserved in the document)', async () => {
    const url = `${server.baseUrl}/oauth/authorize?client_id=${seed.client.id}&redirect_uri=${seed.redirectUri}&response_type=code&scope=api+read_user&state=a/b?c`;
    const response = await fetch(url, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(location(response)).toMatch(/^\/users\/sign_in\?return_to=/);
  });
});
