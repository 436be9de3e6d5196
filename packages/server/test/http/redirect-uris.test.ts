// Redirect URIs over HTTP: exact matching, except the port of a loopback IP URI (RFC 8252 section 7.3), through
// sign-in, consent, the code and its exchange; the registration page warns about plain http to other machines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, consentFields, csrfOf, signIn } from '../support/agent.js';
import { seed, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let agent: Agent;
let app: { id: string; secret: string };
let warningPage = '';

beforeAll(async () => {
  server = await startTestServer();
  agent = new Agent(server.baseUrl);
  expect((await signIn(agent, seed.jsmith.username, seed.jsmith.password)).status).toBe(302);
  const page = await (await agent.get('/profile/applications')).text();
  const created = await agent.post('/profile/applications', {
    _csrf: csrfOf(page),
    name: 'Native app',
    redirect_uri: 'http://127.0.0.1/callback\nhttp://[::1]/callback\nhttp://localhost/callback\nhttp://plain.example.com/callback',
    scopes: 'read_user',
  });
  expect(created.status).toBe(201);
  warningPage = await created.text();
  app = {
    id: /id="app-id" type="text" readonly value="([^"]+)"/.exec(warningPage)![1]!,
    secret: /id="app-secret" type="text" readonly value="([^"]+)"/.exec(warningPage)![1]!,
  };
});
afterAll(() => server.close());

const authorize = (redirectUri: string) =>
  agent.get(`/oauth/authorize?${new URLSearchParams({ client_id: app.id, redirect_uri: redirectUri, response_type: 'code', state: 's' }).toString().replace(/\+/g, '%20')}`);

describe('loopback redirect URIs', () => {
  it.each(['http://127.0.0.1:53124/callback', 'http://[::1]:61001/callback'])('%s gets the consent page, the code on that port, and tokens', async (redirectUri) => {
    const page = await authorize(redirectUri);
    expect(page.status).toBe(200);
    const text = await page.text();
    const approved = await agent.post('/oauth/authorize', { ...consentFields(text), decision: 'approve' });
    expect(approved.status).toBe(302);
    const location = new URL(approved.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(redirectUri);
    const token = await fetch(`${server.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: location.searchParams.get('code')!, redirect_uri: redirectUri, client_id: app.id, client_secret: app.secret }),
    });
    expect(token.status).toBe(200);
    // Revoked, so that the next case meets the consent page again rather than the skip a live token earns.
    const { access_token } = (await token.json()) as { access_token: string };
    const revoked = await fetch(`${server.baseUrl}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: access_token, client_id: app.id, client_secret: app.secret }),
    });
    expect(revoked.status).toBe(200);
  });

  it.each([
    ['another path', 'http://127.0.0.1:53124/elsewhere'],
    ['another loopback address', 'http://127.0.0.2:53124/callback'],
    ['https instead of http', 'https://127.0.0.1:53124/callback'],
    ['localhost with a port (a name, not a loopback address)', 'http://localhost:53124/callback'],
    ['a non-loopback host with another port', 'http://plain.example.com:8080/callback'],
  ])('%s is refused on an error page, with no redirect', async (_what, redirectUri) => {
    const page = await authorize(redirectUri);
    expect(page.status).toBe(400);
    expect(page.headers.get('location')).toBeNull();
    const text = await page.text();
    expect(text).toContain('The redirect URI included is not valid for this application.');
    // Named as it was sent, escaped, for the developer to compare with the registered ones.
    expect(text).toContain(`The redirect URI it sent: ${redirectUri}`);
  });

  it('escapes the redirect URI it shows, and cuts a long one', async () => {
    const page = await (await authorize(`http://127.0.0.1:53124/<script>alert(1)</script>${"x".repeat(300)}`)).text();
    expect(page).toContain('The redirect URI it sent: http://127.0.0.1:53124/&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).not.toContain('<script>alert(1)');
    expect(page).not.toContain('x'.repeat(201));
  });
});

describe('registering an application', () => {
  it('warns about a plain http redirect URI to another machine, and only about that one', () => {
    const warnings = [...warningPage.matchAll(/<p class="warning" role="note">([^<]*)<\/p>/g)].map((m) => m[1]!);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('http://plain.example.com/callback uses plain http');
  });
});
