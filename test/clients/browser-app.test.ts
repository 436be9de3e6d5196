// A single-page app on another origin, in Chromium, calling tokenbell directly: a token request and preflighted API
// calls work (CORS, any origin, no credentials, as the service answers), while the pages and their
// cookie-authenticated forms stay out of its reach, even for a user signed in to tokenbell in the same browser.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSeed } from '../../packages/server/src/domain/seed/load.js';
import { launchChromium, type TestBrowser } from '../../packages/server/test/support/browser.js';
import { seed, startTestServer, type TestServer } from '../../packages/server/test/support/server.js';

let server: TestServer;
let app: Server;
let appOrigin: string;
let browser: TestBrowser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  server = await startTestServer();
  app = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><head><title>A browser app</title></head><body><h1>A browser app</h1></body></html>');
  });
  app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => app.once('listening', resolve));
  // Another port is another origin (though the same site, so SameSite cookies alone would not keep it out).
  appOrigin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  browser = await launchChromium();
  context = await browser.newContext();
  page = await context.newPage();
  // The user is signed in to tokenbell in this browser: its session cookie exists for the app to try to ride on.
  await page.goto(`${server.baseUrl}/users/sign_in`);
  await page.getByLabel('Username or e-mail').fill(seed.jsmith.username);
  await page.getByLabel('Password').fill(seed.jsmith.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${server.baseUrl}/profile/applications`);
  await page.goto(appOrigin);
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  app?.closeAllConnections();
  await new Promise<void>((resolve) => (app ? app.close(() => resolve()) : resolve()));
  await server?.close();
});

describe('a browser app on another origin', () => {
  it('gets a token and calls the API with preflighted requests', async () => {
    const seen = await page.evaluate(
      async ({ base, password }) => {
        const token = await fetch(`${base}/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ grant_type: 'password', username: 'jsmith', password, scope: 'api' }),
        });
        const { access_token } = (await token.json()) as { access_token: string };
        const auth = { authorization: `Bearer ${access_token}` };
        const user = await fetch(`${base}/api/v4/user`, { headers: auth });
        const put = await fetch(`${base}/api/v4/projects/acme%2Fwidgets/notification_settings`, {
          method: 'PUT',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ level: 'watch' }),
        });
        const anonymous = await fetch(`${base}/api/v4/user`);
        const revoke = await fetch(`${base}/oauth/revoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ token: access_token }),
        });
        const metadata = await fetch(`${base}/.well-known/oauth-authorization-server`);
        return {
          token: token.status,
          user: [user.status, ((await user.json()) as { username: string }).username],
          put: [put.status, await put.json()],
          anonymous: [anonymous.status, anonymous.headers.get('www-authenticate')],
          revoke: revoke.status,
          metadata: metadata.status,
        };
      },
      { base: server.baseUrl, password: seed.jsmith.password },
    );
    expect(seen).toEqual({
      token: 200,
      user: [200, 'jsmith'],
      put: [200, { level: 'watch' }],
      anonymous: [401, 'Bearer realm="tokenbell"'],
      revoke: 200,
      metadata: 200,
    });
  });

  it('runs the code flow as a public client: PKCE, then the exchange from the page with its client_id alone', async () => {
    await loadSeed(server.storage, {
      applications: [{ name: 'Single-page App', owner: 'jsmith', client_id: 'spa-client', redirect_uris: ['http://127.0.0.1/callback'], confidential: false }],
    });
    const verifier = randomBytes(32).toString('base64url');
    const authorize = new URL(`${server.baseUrl}/oauth/authorize`);
    for (const [k, v] of Object.entries({
      client_id: 'spa-client',
      redirect_uri: `${appOrigin}/callback`,
      response_type: 'code',
      scope: 'read_user',
      state: 'spa-state',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    })) {
      authorize.searchParams.set(k, v);
    }
    await page.goto(authorize.href);
    await page.getByRole('button', { name: 'Authorize' }).click();
    await page.waitForURL((url) => url.origin === appOrigin);
    const seen = await page.evaluate(
      async ({ base, verifier }) => {
        const params = new URLSearchParams(location.search);
        const token = await fetch(`${base}/oauth/token`, {
          method: 'POST',
          body: new URLSearchParams({
            grant_type: 'authorization_code',
            code: params.get('code') ?? '',
            redirect_uri: `${location.origin}/callback`,
            client_id: 'spa-client',
            code_verifier: verifier,
          }),
        });
        const { access_token } = (await token.json()) as { access_token: string };
        const user = await fetch(`${base}/api/v4/user`, { headers: { authorization: `Bearer ${access_token}` } });
        return { state: params.get('state'), token: token.status, user: ((await user.json()) as { username: string }).username };
      },
      { base: server.baseUrl, verifier },
    );
    expect(seen).toEqual({ state: 'spa-state', token: 200, user: 'jsmith' });
  });

  it('cannot read the pages or introspect, and cannot post their forms with the user\'s session', async () => {
    const tokensBefore = await server.count('personal_access_tokens');
    const seen = await page.evaluate(async (base) => {
      const outcome = (p: Promise<Response>) => p.then((r) => `answered ${r.status}`, (e: Error) => `blocked: ${e.name}`);
      const form = new URLSearchParams({ name: 'planted by another site', scopes: 'api' });
      return {
        page: await outcome(fetch(`${base}/profile/personal_access_tokens`, { credentials: 'include' })),
        introspect: await outcome(fetch(`${base}/oauth/introspect`, { method: 'POST', body: new URLSearchParams({ token: 'x' }) })),
        // A no-cors post goes out with the session cookie (same site), the CSRF check refuses it, and the browser
        // does not even hand over the opaque answer (the pages' Cross-Origin-Resource-Policy: same-origin).
        post: await fetch(`${base}/profile/personal_access_tokens`, { method: 'POST', mode: 'no-cors', credentials: 'include', body: form }).then((r) => r.type, (e: Error) => `${e.name}: ${e.message}`),
      };
    }, server.baseUrl);
    expect(seen).toEqual({ page: 'blocked: TypeError', introspect: 'blocked: TypeError', post: 'TypeError: Failed to fetch' });
    expect(await server.count('personal_access_tokens')).toBe(tokensBefore);
  });

  it('met no Content Security Policy violation', () => {
    expect(browser.cspViolations).toEqual([]);
  });
});

describe('CORS headers', () => {
  it('answers a preflight for the API from any origin, without credentials, and none for the pages', async () => {
    const preflight = (path: string) =>
      fetch(`${server.baseUrl}${path}`, {
        method: 'OPTIONS',
        headers: { origin: 'https://spa.example', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'authorization, content-type' },
      });
    const api = await preflight('/api/v3/notification_settings');
    expect(api.status).toBe(204);
    expect(api.headers.get('access-control-allow-origin')).toBe('*');
    expect(api.headers.get('access-control-allow-credentials')).toBeNull();
    expect(api.headers.get('access-control-allow-headers')).toBe('authorization, content-type');
    expect((await preflight('/OAUTH/TOKEN')).headers.get('access-control-allow-origin')).toBe('*');
    for (const path of ['/profile/applications', '/users/sign_in', '/oauth/authorize', '/oauth/introspect', '/-/metrics']) {
      expect((await preflight(path)).headers.get('access-control-allow-origin'), path).toBeNull();
    }
  });
});
