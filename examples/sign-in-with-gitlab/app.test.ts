// The example app's suite as an app's own would be written: tokenbell in-process stands in for GitLab, seeded with
// one user and the app's application, reset before each test; the sign-in runs headless or through the real pages in
// Chromium, the clock is moved to expire tokens, and the request journal says what the app sent.
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemoryStore, type SessionData } from 'express-session';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTokenbell, type RunningTokenbell } from '@tokenbell/server/testing';
import { createApp, sessionCookie } from './app.js';

const alice = { username: 'alice', email: 'alice@example.com', name: 'Alice Example', password: 'alice-example-password' };
const client = { client_id: 'sign-in-with-gitlab-example', client_secret: 'tbcs_sign-in-with-gitlab-example-secret' };
const tokenTtl = 60;
const chromiumPath = '/usr/bin/chromium';

let tokenbell: RunningTokenbell;
let appServer: Server;
let appUrl: string;
let sessions: MemoryStore;
let browser: Browser | undefined;

beforeAll(async () => {
  // The redirect URI has to match the registered one exactly, so the app's port is taken before tokenbell is seeded.
  appServer = createServer();
  await new Promise<void>((resolve) => appServer.listen(0, '127.0.0.1', resolve));
  appUrl = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}`;
  tokenbell = await startTokenbell({
    seed: {
      users: [alice],
      applications: [{ name: 'Example App', owner: 'alice', ...client, redirect_uris: [`${appUrl}/callback`], scopes: ['read_user'] }],
    },
    config: { tokenTtl },
  });
  sessions = new MemoryStore();
  appServer.on('request', createApp({ gitlabUrl: tokenbell.url, clientId: client.client_id, clientSecret: client.client_secret, redirectUri: `${appUrl}/callback`, sessionStore: sessions }));
  // As the server's browser tests do: a machine without Chromium fails under CI and skips only on a workstation.
  if (existsSync(chromiumPath)) {
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  } else if (process.env.CI === 'true') {
    throw new Error(`Chromium is required for the browser tests but ${chromiumPath} does not exist; install it (apt-get install chromium).`);
  }
});

afterAll(async () => {
  await browser?.close();
  appServer?.closeAllConnections();
  await new Promise<void>((resolve) => (appServer ? appServer.close(() => resolve()) : resolve()));
  await tokenbell?.close();
});

// Back to the seed: users, tokens, clock, journal, faults and automatic approval.
beforeEach(() => tokenbell.helpers.reset());

/** A visitor of the app without a browser: fetch with the app's session cookie kept, redirects not followed. */
function visitor() {
  let cookie = '';
  const request = async (path: string, init: RequestInit = {}) => {
    const response = await fetch(new URL(path, appUrl), { ...init, redirect: 'manual', headers: cookie ? { cookie } : {}, signal: AbortSignal.timeout(10_000) });
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(';')[0]!;
      if (pair.startsWith(`${sessionCookie}=`)) cookie = pair.endsWith('=') ? '' : pair;
    }
    return response;
  };
  return {
    get: request,
    post: (path: string) => request(path, { method: 'POST' }),
    /** The tokens the app keeps in this visitor's session, read from the session store. */
    async tokens(): Promise<SessionData['tokens']> {
      // The cookie is `s:<id>.<signature>`, URL-encoded (express-session's signed format).
      const signed = decodeURIComponent(cookie.slice(sessionCookie.length + 1));
      const id = signed.slice(2, signed.lastIndexOf('.'));
      const data = await new Promise<SessionData | null | undefined>((resolve, reject) => sessions.get(id, (error, found) => (error ? reject(error) : resolve(found))));
      return data?.tokens;
    },
  };
}

/** The code flow with PKCE, the authorization step answered by the test kit instead of a browser. */
async function signInHeadless(as = visitor()) {
  const login = await as.get('/login');
  expect(login.status).toBe(302);
  const authorize = new URL(login.headers.get('location')!);
  expect(authorize.origin + authorize.pathname).toBe(`${tokenbell.url}/oauth/authorize`);
  const asked = Object.fromEntries(authorize.searchParams);
  expect(asked).toMatchObject({ response_type: 'code', client_id: client.client_id, scope: 'read_user', code_challenge_method: 'S256' });
  const answer = await tokenbell.helpers.authorize({
    username: 'alice',
    client_id: asked.client_id!,
    redirect_uri: asked.redirect_uri!,
    scope: asked.scope,
    state: asked.state,
    code_challenge: asked.code_challenge,
    code_challenge_method: asked.code_challenge_method,
  });
  expect(answer).toMatchObject({ error: null, state: asked.state, code: expect.any(String) });
  const callback = await as.get(`/callback?${new URLSearchParams({ code: answer.code!, state: answer.state! })}`);
  expect(callback.status).toBe(302);
  expect(callback.headers.get('location')).toBe('/');
  return as;
}

const pageText = async (response: Response | Promise<Response>) => (await response).text();

describe('sign in with GitLab, against tokenbell', () => {
  it('signs in with the code flow and PKCE, the authorization answered headless', async () => {
    const alicesBrowser = await signInHeadless();
    expect(await pageText(alicesBrowser.get('/'))).toContain('Signed in as alice');
    const [exchange] = await tokenbell.helpers.requests({ path: '/oauth/token', client_id: client.client_id });
    expect(exchange).toMatchObject({ grant_type: 'authorization_code', status: 200, username: 'alice' });
  });

  it('refuses a callback whose state is not the one it sent', async () => {
    const alicesBrowser = visitor();
    await alicesBrowser.get('/login');
    const callback = await alicesBrowser.get('/callback?code=planted&state=not-ours');
    expect(callback.status).toBe(400);
    expect(await tokenbell.helpers.requests({ path: '/oauth/token' })).toEqual([]);
  });

  describe('through the real pages in Chromium', () => {
    const signInThroughPages = async (fillForms: boolean) => {
      const context = await browser!.newContext();
      context.setDefaultTimeout(10_000);
      try {
        const page = await context.newPage();
        const seenPaths: string[] = [];
        page.on('framenavigated', (frame) => seenPaths.push(new URL(frame.url()).pathname));
        await page.goto(`${appUrl}/login`);
        if (fillForms) {
          await page.getByLabel('Username or e-mail').fill(alice.username);
          await page.getByLabel('Password').fill(alice.password);
          await page.getByRole('button', { name: 'Sign in' }).click();
          await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Authorize Example App to use your account?');
          await page.getByRole('button', { name: 'Authorize' }).click();
        }
        await page.waitForURL((url) => url.origin === appUrl && url.pathname === '/');
        expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Signed in as alice');
        return seenPaths;
      } finally {
        await context.close();
      }
    };

    it('signs in through the sign-in form and the consent page', async (context) => {
      if (!browser) return context.skip(`no Chromium at ${chromiumPath} (apt-get install chromium); under CI=true this fails instead`);
      expect(await signInThroughPages(true)).toContain('/users/sign_in');
    });

    it('signs in with no form at all once approval is automatic', async (context) => {
      if (!browser) return context.skip(`no Chromium at ${chromiumPath} (apt-get install chromium); under CI=true this fails instead`);
      await tokenbell.helpers.setAutoApproval('alice');
      expect(await signInThroughPages(false)).not.toContain('/users/sign_in');
    });
  });

  it('refreshes once the access token has expired, and the user stays signed in', async () => {
    const alicesBrowser = await signInHeadless();
    await tokenbell.helpers.advanceClock(tokenTtl + 1);
    expect(await pageText(alicesBrowser.get('/'))).toContain('Signed in as alice');
    const [refresh, ...others] = (await tokenbell.helpers.requests({ path: '/oauth/token', client_id: client.client_id })).filter((r) => r.grant_type === 'refresh_token');
    expect(others).toEqual([]);
    expect(refresh).toMatchObject({ client_id: client.client_id, status: 200 });
    // Newest first: the expired token's 401, then the retry with the new one.
    expect((await tokenbell.helpers.requests({ path: '/api/v4/user', per_page: 2 })).map((r) => r.status)).toEqual([200, 401]);
  });

  it('revokes the access token on logout', async () => {
    const alicesBrowser = await signInHeadless();
    const { access_token } = (await alicesBrowser.tokens())!;
    const logout = await alicesBrowser.post('/logout');
    expect(logout.status).toBe(303);
    expect(await tokenbell.helpers.requests({ path: '/oauth/revoke' })).toEqual([expect.objectContaining({ method: 'POST', client_id: client.client_id, status: 200 })]);
    const api = await fetch(`${tokenbell.url}/api/v4/user`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(api.status).toBe(401);
    expect(await pageText(alicesBrowser.get('/'))).toContain('Sign in with GitLab');
  });

  it('ends the session when the refresh is refused', async () => {
    const alicesBrowser = await signInHeadless();
    const fault = await tokenbell.helpers.queueFault({ match: { path: '/oauth/token', grant_type: 'refresh_token', client_id: client.client_id }, answer: { error: 'invalid_grant' } });
    await tokenbell.helpers.advanceClock(tokenTtl + 1);
    expect(await pageText(alicesBrowser.get('/'))).toContain('Your session expired; sign in again');
    expect((await tokenbell.helpers.requests({ path: '/oauth/token', client_id: client.client_id }))[0]).toMatchObject({ grant_type: 'refresh_token', status: 400, fault: fault.id });
    expect(await alicesBrowser.tokens()).toBeUndefined();
  });
});
