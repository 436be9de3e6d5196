// "Sign in with GitLab" as Express apps write it: passport-gitlab2 in a small app of its own, pointed at the reference
// server by its base URL only, with state and PKCE. Chromium walks the whole flow through tokenbell's real sign-in
// and consent pages; passport exchanges the code and reads the profile from /api/v4/user.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import { Strategy as GitLabStrategy, type GitLabProfile } from 'passport-gitlab2';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, type TestBrowser } from '../../packages/server/test/support/browser.js';
import { seed, startTestServer, type TestServer } from '../../packages/server/test/support/server.js';
import { installedVersion } from './installed.js';

let server: TestServer;
let client: Server;
let clientBase: string;
let browser: TestBrowser;
let context: BrowserContext;

beforeAll(async () => {
  server = await startTestServer();
  const app = express();
  client = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => client.once('listening', resolve));
  clientBase = `http://127.0.0.1:${(client.address() as AddressInfo).port}`;

  // The example application's redirect URI is a loopback one, http://127.0.0.1:8080/callback, which matches any
  // port (RFC 8252 section 7.3), so this app's /callback is a registered redirect URI.
  const strategy = new GitLabStrategy(
    { clientID: seed.client.id, clientSecret: seed.client.secret, callbackURL: `${clientBase}/callback`, baseURL: server.baseUrl, state: true, pkce: true },
    (_accessToken, _refreshToken, profile, done) => done(null, profile),
  );
  passport.use(strategy);
  passport.serializeUser((user, done) => done(null, user));
  passport.deserializeUser((user: Express.User, done) => done(null, user));
  app.use(session({ secret: 'client-app-session-secret', resave: false, saveUninitialized: false }));
  app.use(passport.session());
  app.get('/login', passport.authenticate('gitlab'));
  app.get('/callback', passport.authenticate('gitlab', { failureRedirect: '/failed' }), (req, res) => {
    const profile = req.user as GitLabProfile;
    res.type('html').send(`<!doctype html><title>Client</title><h1>Signed in as ${profile.username}</h1><p id="email">${profile.emails[0]!.value}</p>`);
  });
  app.get('/failed', (_req, res) => res.status(401).type('html').send('<!doctype html><title>Client</title><h1>Sign-in failed</h1>'));

  browser = await launchChromium();
  context = await browser.newContext();
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  client?.closeAllConnections();
  await new Promise<void>((resolve) => (client ? client.close(() => resolve()) : resolve()));
  await server?.close();
});

describe(`passport-gitlab2 ${installedVersion('passport-gitlab2')} (passport-oauth2 ${installedVersion('passport-oauth2')})`, () => {
  it('signs a user in through the sign-in and consent pages, with state and PKCE, and reads the profile', async () => {
    const page = await context.newPage();
    const authorizeRequests: URL[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.origin === server.baseUrl && url.pathname === '/oauth/authorize' && request.method() === 'GET') authorizeRequests.push(url);
    });
    await page.goto(`${clientBase}/login`);
    await expect.poll(() => new URL(page.url()).pathname).toBe('/users/sign_in');
    expect(await page.getByText('is asking for access to your account').textContent()).toContain('Example App');
    await page.getByLabel('Username or e-mail').fill(seed.jsmith.username);
    await page.getByLabel('Password').fill(seed.jsmith.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Authorize Example App to use your account?');
    await page.getByRole('button', { name: 'Authorize' }).click();
    await page.waitForURL((url) => url.origin === clientBase);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Signed in as jsmith');
    expect(await page.locator('#email').textContent()).toBe('jsmith@example.com');

    const [first] = authorizeRequests;
    expect(first?.searchParams.get('code_challenge_method')).toBe('S256');
    expect(first?.searchParams.get('state')).toMatch(/.{8,}/);
    expect(first?.searchParams.get('scope')).toBe('read_user');
    expect(browser.cspViolations).toEqual([]);
  });
});
