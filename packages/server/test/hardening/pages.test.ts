// What test/http/web-flow.test.ts does not already cover on the pages: security headers on every kind of page the
// server answers (errors included), and open redirects through every redirect parameter with lookalike URLs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerApplication } from '../../src/domain/applications.js';
import { Agent, csrfOf, signIn } from '../support/agent.js';
import { seed, startTestServer, type TestServer } from '../support/server.js';
import { rawRequest } from './support.js';

const registered = 'https://app.example.com/oauth/callback';
let server: TestServer;
let clientId: string;
beforeAll(async () => {
  server = await startTestServer();
  const owner = (await server.storage.users.byUsername('jsmith'))!;
  clientId = (await registerApplication(server.storage, owner.id, { name: 'Lookalike target', redirect_uris: [registered], scopes: ['read_user'] })).record.uid;
});
afterAll(() => server.close());

/** Percent-encodes every reserved character, as the validator wants query values. */
const query = (params: Record<string, string>) =>
  Object.entries(params)
    .map(([k, v]) => `${k}=${encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`)
    .join('&');

async function signedIn(): Promise<Agent> {
  const agent = new Agent(server.baseUrl);
  expect((await signIn(agent, seed.jsmith.username, seed.jsmith.password)).status).toBe(302);
  return agent;
}

function expectPageHeaders(response: Response | { headers: Headers }, what: string): void {
  const csp = response.headers.get('content-security-policy') ?? '';
  expect(csp, what).toContain("frame-ancestors 'none'");
  expect(csp, what).toContain("script-src 'none'");
  expect(csp, what).toContain("default-src 'self'");
  expect(response.headers.get('x-frame-options'), what).toBe('DENY');
  expect(response.headers.get('cache-control'), what).toBe('no-store');
  expect(response.headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(response.headers.get('referrer-policy'), what).toBe('no-referrer');
}

describe('security headers on every kind of page', () => {
  it('sends CSP with frame-ancestors none, X-Frame-Options DENY and no-store on pages, errors and redirects alike', async () => {
    const agent = await signedIn();
    const consentUrl = `/oauth/authorize?${query({ client_id: clientId, redirect_uri: registered, response_type: 'code', state: 's' })}`;
    const cases: Array<[string, () => Promise<Response>, number]> = [
      ['the sign-in page', () => new Agent(server.baseUrl).get('/users/sign_in'), 200],
      ['the consent page', () => agent.get(consentUrl), 200],
      ['wrong credentials', async () => {
        const fresh = new Agent(server.baseUrl);
        const page = await (await fresh.get('/users/sign_in')).text();
        return fresh.post('/users/sign_in', { _csrf: csrfOf(page), login: 'jsmith', password: 'wrong-password' });
      }, 401],
      ['a forged form', () => agent.post('/profile/applications', { _csrf: 'forged', name: 'x', redirect_uri: registered }), 403],
      ['an invalid authorization request', () => agent.get(`/oauth/authorize?${query({ client_id: 'nobody', redirect_uri: registered, response_type: 'code' })}`), 400],
      ['a missing application', async () => {
        const page = await (await agent.get('/profile/applications')).text();
        return agent.post('/profile/applications/999999/delete', { _csrf: csrfOf(page) });
      }, 404],
      ['a form over the size limit', () => agent.post('/users/sign_in', { _csrf: 'x', login: 'x'.repeat(110 * 1024), password: 'y' }), 413],
      ['a redirect to sign in', () => new Agent(server.baseUrl).get('/profile/personal_access_tokens'), 302],
    ];
    for (const [what, send, status] of cases) {
      const response = await send();
      expect(response.status, what).toBe(status);
      expectPageHeaders(response, what);
      if (status !== 302) expect(response.headers.get('content-type'), what).toMatch(/^text\/html/);
    }
  });
});

// Lookalikes of the registered redirect URI: each differs in one way a sloppy comparison would forgive.
const lookalikes = [
  `${registered}/`,
  'https://APP.example.com/oauth/callback',
  'https://app.EXAMPLE.com/oauth/callback',
  'https://app.example.com/oauth/CALLBACK',
  `${registered}?next=https://evil.example`,
  `${registered}?`,
  `${registered}#https://evil.example`,
  `${registered}#`,
  'https://app.example.com@evil.example/oauth/callback',
  'https://app.example.com:443@evil.example/oauth/callback',
  'https://user:pass@app.example.com/oauth/callback',
  'https://app.example.com.evil.example/oauth/callback',
  'https://evil.example/app.example.com/oauth/callback',
  'http://app.example.com/oauth/callback',
  'https://app.example.com:443/oauth/callback',
  'https://app.example.com:8443/oauth/callback',
  `${registered}/../../evil`,
  'https://app.example.com/oauth/callback%2F..%2F..%2Fevil',
  `${registered}%00`,
  ` ${registered}`,
  `${registered} `,
  '//app.example.com/oauth/callback',
  'https://app.example.com\\@evil.example/oauth/callback',
];

describe('redirect_uri on the authorization endpoint', () => {
  it.each(lookalikes)('never redirects to the lookalike %j, on GET or on the consent POST', async (lookalike) => {
    const codes = await server.count('authorization_codes');
    const agent = await signedIn();
    for (const responseType of ['code', 'token']) {
      // `token` is an error the client is normally told about by redirect: only ever to a registered URI.
      for (const who of [new Agent(server.baseUrl), agent]) {
        const response = await who.get(`/oauth/authorize?${query({ client_id: clientId, redirect_uri: lookalike, response_type: responseType, state: 's' })}`);
        expect(response.status, `GET ${responseType}`).toBe(400);
        expect(response.headers.get('location')).toBeNull();
        expect(await response.text()).toContain('The redirect URI included is not valid for this application.');
      }
    }
    // The consent form's hidden field tampered with after a legitimate consent page.
    const page = await (await agent.get(`/oauth/authorize?${query({ client_id: clientId, redirect_uri: registered, response_type: 'code', state: 's' })}`)).text();
    for (const decision of ['approve', 'deny']) {
      const response = await agent.post('/oauth/authorize', { _csrf: csrfOf(page), client_id: clientId, redirect_uri: lookalike, response_type: 'code', state: 's', decision });
      expect(response.status, `POST ${decision}`).toBe(400);
      expect(response.headers.get('location')).toBeNull();
    }
    expect(await server.count('authorization_codes')).toBe(codes);
  });

  it('redirects to the registered URI exactly as registered (the control for the cases above)', async () => {
    const agent = await signedIn();
    const page = await (await agent.get(`/oauth/authorize?${query({ client_id: clientId, redirect_uri: registered, response_type: 'code', state: 's' })}`)).text();
    const response = await agent.post('/oauth/authorize', { _csrf: csrfOf(page), client_id: clientId, redirect_uri: registered, response_type: 'code', state: 's', decision: 'approve' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toMatch(/^https:\/\/app\.example\.com\/oauth\/callback\?code=[^&]+&state=s$/);
  });
});

const returnToLookalikes = [
  'https://evil.example/profile',
  `http://127.0.0.1:1/profile`,
  '//evil.example/profile',
  '///evil.example/profile',
  '/\\evil.example',
  '\\/evil.example',
  '/\t/evil.example',
  '/\r\n/evil.example',
  '/%09/evil.example',
  'https:evil.example',
  'javascript:alert(document.domain)',
  'data:text/html,<script>alert(1)</script>',
  '@evil.example',
  'evil.example',
  '.evil.example',
];

describe('return_to after sign-in', () => {
  it.each(returnToLookalikes)('stays on this instance for %j, on the page and through the form', async (returnTo) => {
    const base = new URL(server.baseUrl);
    const agent = new Agent(server.baseUrl);
    const page = await agent.get(`/users/sign_in?${query({ return_to: returnTo })}`);
    const html = await page.text();
    const kept = /name="return_to" value="([^"]*)"/.exec(html)?.[1];
    if (kept !== undefined) expect(new URL(kept.replace(/&amp;/g, '&'), base).origin).toBe(base.origin);
    const response = await agent.post('/users/sign_in', { _csrf: csrfOf(html), login: 'jsmith', password: seed.jsmith.password, return_to: returnTo });
    expect(response.status).toBe(302);
    const target = new URL(response.headers.get('location')!, base);
    expect(target.origin).toBe(base.origin);
    expect(response.headers.get('location')).toMatch(/^\/(?![/\\])/);
  });

  it('keeps a local return_to, query and all (the control for the cases above)', async () => {
    const agent = new Agent(server.baseUrl);
    const local = '/profile/personal_access_tokens?from=%2F%2Fevil.example';
    const html = await (await agent.get(`/users/sign_in?${query({ return_to: local })}`)).text();
    const response = await agent.post('/users/sign_in', { _csrf: csrfOf(html), login: 'jsmith', password: seed.jsmith.password, return_to: local });
    expect(response.headers.get('location')).toBe(local);
  });

  it('answers a raw request with a return_to of bytes a browser would not send without a redirect off the instance', async () => {
    const response = await rawRequest(server.baseUrl, 'GET', '/users/sign_in?return_to=%2F%5C%2Fevil.example%FF');
    expect(response.status).toBeLessThan(500);
    expect(response.body).not.toContain('name="return_to"');
  });
});
