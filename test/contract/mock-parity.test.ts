// What a client written for GitLab, or a UI built on the mock, meets on the mock as on the reference server, beyond
// the contract cases (which ask the mock for each answer with Prefer): the `/api/v4` paths, discovery documents that
// name the address they were fetched from, the authorization redirect a browser can be sent through (no state when
// none was sent, and an error page rather than a redirect to an unregistered URI or for an unknown client), the
// unsupported_grant_type of an unknown grant type without any Prefer, and the same CORS answers, preflight and actual.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callbackParams } from '../../packages/sdk/src/index.js';
import { mockAllowedHeaders } from '../../scripts/lib/mock-document.js';
import { exampleApp, serverSetup, users } from './context.js';
import { type ReferenceServer, type RunningProcess, startPrismMock, startReferenceServer, startupTimeoutMs } from './processes.js';

// The mock has no store: nothing here for the PostgreSQL run to add.
const onFileStore = process.env.TOKENBELL_TEST_STORE !== 'postgres';

let server: ReferenceServer;
let mock: RunningProcess;
const started: RunningProcess[] = [];

beforeAll(async () => {
  if (!onFileStore) return;
  const results = await Promise.allSettled([startReferenceServer(), startPrismMock()]);
  for (const r of results) if (r.status === 'fulfilled') started.push(r.value);
  for (const r of results) if (r.status === 'rejected') throw r.reason;
  [server, mock] = started as [ReferenceServer, RunningProcess];
}, startupTimeoutMs(2));

afterAll(async () => {
  await Promise.all(started.map((p) => p.stop()));
});

const origin = 'http://127.0.0.1:5173';
/** The Access-Control-* headers of an answer, by lower-case name. */
const corsHeaders = (response: Response) => Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-')));
const withToken = { 'PRIVATE-TOKEN': users.jsmith.pat };

describe.runIf(onFileStore)('the mock stands in for the server', () => {
  it('answers the API under /api/v4 as under /api/v3, as the server does', async () => {
    for (const target of [server, mock]) {
      for (const version of ['v3', 'v4']) {
        const response = await fetch(`${target.baseUrl}/api/${version}/user`, { headers: withToken });
        expect(response.status, `${target.name} /api/${version}/user`).toBe(200);
        expect(await response.json()).toMatchObject({ id: 1, username: 'jsmith', name: 'Jane Smith', email: 'jsmith@example.com' });
      }
      const project = await fetch(`${target.baseUrl}/api/v4/projects/${encodeURIComponent('acme/widgets')}/notification_settings`, { headers: withToken });
      expect(project.status, target.name).toBe(200);
    }
  });

  it('sends clients of its discovery documents to itself', async () => {
    for (const target of [server, mock]) {
      const metadata = (await (await fetch(`${target.baseUrl}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      expect(metadata.issuer, target.name).toBe(target.baseUrl);
      for (const key of ['authorization_endpoint', 'token_endpoint', 'revocation_endpoint', 'jwks_uri', 'device_authorization_endpoint']) {
        expect(String(metadata[key]).startsWith(`${target.baseUrl}/`), `${target.name} ${key}`).toBe(true);
      }
      const openid = (await (await fetch(`${target.baseUrl}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      expect(openid.issuer, target.name).toBe(target.baseUrl);
      expect(openid.userinfo_endpoint, target.name).toBe(`${target.baseUrl}/oauth/userinfo`);
    }
  });

  it("redirects a browser from the authorization endpoint to the example application's callback with a code and the state", async () => {
    const query = new URLSearchParams({ client_id: exampleApp.clientId, redirect_uri: exampleApp.redirectUri, response_type: 'code', state: 'af0ifjsldkj' });
    // A navigation carries no Prefer header: the query asks for the redirect.
    for (const init of [{ url: `${mock.baseUrl}/oauth/authorize?${query}&__code=302` }, { url: `${mock.baseUrl}/oauth/authorize?${query}`, headers: { Prefer: 'code=302' } }]) {
      const response = await fetch(init.url, { headers: init.headers, redirect: 'manual' });
      expect(response.status, init.url).toBe(302);
      const location = response.headers.get('location') ?? '';
      expect(location.startsWith(`${exampleApp.redirectUri}?`), location).toBe(true);
      expect(callbackParams(location)).toMatchObject({ code: expect.any(String), state: 'af0ifjsldkj' });
    }
    // Unasked, the mock shows the consent page, as the server does to a signed-in user who has not approved yet.
    const page = await fetch(`${mock.baseUrl}/oauth/authorize?${query}`, { redirect: 'manual' });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  });

  /** A cookie of jsmith signed in on the server, who has approved Example App for read_api: the server redirects at once. */
  const approvedSession = async () => {
    const setup = serverSetup(server.baseUrl, server.storeUnwritable);
    await setup.token(users.jsmith, { scope: 'read_api' });
    return (await setup.session(users.jsmith)).cookie;
  };
  /** The authorization request on each target, the mock's asking for the redirect as a browser would (__code=302). */
  const authorizeOn = async (params: Record<string, string>) => {
    const query = new URLSearchParams({ response_type: 'code', scope: 'read_api', ...params });
    const cookie = await approvedSession();
    return {
      server: await fetch(`${server.baseUrl}/oauth/authorize?${query}`, { headers: { cookie }, redirect: 'manual' }),
      mock: await fetch(`${mock.baseUrl}/oauth/authorize?${query}&__code=302`, { redirect: 'manual' }),
    };
  };

  it('redirects without a state when the request carries none, as the server does', async () => {
    const answers = await authorizeOn({ client_id: exampleApp.clientId, redirect_uri: exampleApp.redirectUri });
    for (const [target, response] of Object.entries(answers)) {
      expect(response.status, target).toBe(302);
      const location = new URL(response.headers.get('location') ?? '');
      expect(`${location.origin}${location.pathname}`, target).toBe(exampleApp.redirectUri);
      expect([...location.searchParams.keys()], target).toEqual(['code']);
    }
  });

  it('answers an error page and never redirects to a redirect_uri the application has not registered, or for a client it does not know, as the server does', async () => {
    for (const params of [
      { client_id: exampleApp.clientId, redirect_uri: 'https://evil.example/callback', state: 'st-unregistered' },
      { client_id: 'no-such-client', redirect_uri: exampleApp.redirectUri, state: 'st-unknown-client' },
    ]) {
      const answers = await authorizeOn(params);
      for (const [target, response] of Object.entries(answers)) {
        expect([response.status, response.headers.get('location')], `${target} ${params.client_id} ${params.redirect_uri}`).toEqual([400, null]);
        expect(response.headers.get('content-type'), target).toMatch(/^text\/html/);
        expect(await response.text(), target).toContain('<h1>This request could not be handled</h1>');
      }
    }
  });

  it('answers an unknown grant type with unsupported_grant_type, unasked', async () => {
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: exampleApp.clientId, client_secret: exampleApp.clientSecret });
    for (const target of [server, mock]) {
      const response = await fetch(`${target.baseUrl}/oauth/token`, { method: 'POST', body });
      expect(response.status, target.name).toBe(400);
      expect(await response.json(), target.name).toMatchObject({ error: 'unsupported_grant_type' });
    }
  });

  it('answers a CORS preflight from the same origin as the server does', async () => {
    const asked = 'authorization,content-type,private-token';
    for (const [path, method] of [
      ['/api/v3/user', 'GET'],
      ['/api/v4/projects/acme%2Fwidgets/notification_settings', 'PUT'],
      ['/oauth/token', 'POST'],
      ['/.well-known/openid-configuration', 'GET'],
    ] as const) {
      const preflight = (target: RunningProcess) =>
        fetch(`${target.baseUrl}${path}`, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': asked } });
      const [onServer, onMock] = await Promise.all([preflight(server), preflight(mock)]);
      expect([onMock.status, path]).toEqual([onServer.status, path]);
      expect(onServer.status).toBe(204);
      const { 'access-control-allow-headers': serverAllows, ...serverRest } = corsHeaders(onServer);
      const { 'access-control-allow-headers': mockAllows, ...mockRest } = corsHeaders(onMock);
      expect(mockRest, path).toEqual(serverRest);
      expect(serverRest['access-control-allow-origin']).toBe('*');
      expect(serverRest['access-control-allow-credentials']).toBeUndefined();
      // The server echoes the headers asked for; the mock allows any by the wildcard, and Authorization by name.
      expect(serverAllows).toBe(asked);
      expect(mockAllows).toBe(mockAllowedHeaders);
    }
  });

  it('sends the same CORS headers on an actual request from the same origin, X-Request-Id and the pagination headers exposed, and none on a page', async () => {
    for (const [path, headers] of [
      ['/api/v3/user', withToken],
      ['/api/v4/user', withToken],
      ['/.well-known/oauth-authorization-server', {}],
      ['/oauth/discovery/keys', {}],
    ] as const) {
      const [onServer, onMock] = await Promise.all([server, mock].map((t) => fetch(`${t.baseUrl}${path}`, { headers: { Origin: origin, ...headers } })));
      expect([onServer!.status, onMock!.status], path).toEqual([200, 200]);
      expect(corsHeaders(onMock!), path).toEqual(corsHeaders(onServer!));
      // The pagination headers too, which a browser app reads to page through a list.
      expect(corsHeaders(onServer!)).toEqual({
        'access-control-allow-origin': '*',
        'access-control-expose-headers': 'WWW-Authenticate,X-Request-Id,Retry-After,X-Total,X-Total-Pages,X-Page,X-Per-Page,X-Next-Page,X-Prev-Page,Link',
      });
    }
    for (const target of [server, mock]) {
      const page = await fetch(`${target.baseUrl}/users/sign_in`, { headers: { Origin: origin } });
      expect(page.status, target.name).toBe(200);
      expect(corsHeaders(page), target.name).toEqual({});
    }
  });
});
