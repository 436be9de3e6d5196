// The pages in a real browser (Debian's Chromium driven by playwright-core): sign in, register an application, run
// the authorization code flow against a small local client app, exchange the code. Also proves the consent page's
// CSP lets the browser follow the redirect back to the client (Chromium applies form-action to it).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, type TestBrowser } from '../support/browser.js';
import { checkPage, contextOptions } from '../support/page-checks.js';
import { currentCode } from '../support/two-factor.js';
import { seed, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let client: Server;
let callbackUrl: string;
let browser: TestBrowser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  browser = await launchChromium();
  server = await startTestServer();
  // The "client app": its callback page echoes what it received, as a real client's would before exchanging the code.
  client = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    res.writeHead(url.pathname === '/callback' ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><html lang="en"><head><title>Client</title></head><body><h1>Callback received</h1>` +
        `<p>${url.searchParams.has('code') ? 'Got a code' : `Error: ${url.searchParams.get('error') ?? 'none'}`}</p></body></html>`,
    );
  });
  client.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => client.once('listening', resolve));
  callbackUrl = `http://127.0.0.1:${(client.address() as AddressInfo).port}/callback`;

  context = await browser.newContext(contextOptions('desktop'));
  page = await context.newPage();
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  if (client?.listening) {
    client.closeAllConnections();
    await new Promise<void>((resolve) => client.close(() => resolve()));
  }
  await server?.close();
});

const authorizeUrl = (clientId: string, state: string) =>
  `${server.baseUrl}/oauth/authorize?client_id=${encodeURIComponent(clientId)}&redirect_uri=${encodeURIComponent(callbackUrl)}` +
  `&response_type=code&state=${encodeURIComponent(state)}&scope=read_user`;

describe('the pages in Chromium', () => {
  let appId: string;
  let appSecret: string;

  it('signs in through the form and lands back on the applications page', async () => {
    await page.goto(`${server.baseUrl}/profile/applications`);
    await expect.poll(() => new URL(page.url()).pathname).toBe('/users/sign_in');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
    await page.getByLabel('Username or e-mail').fill(seed.jsmith.username);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Invalid login or password.');

    await page.getByLabel('Password').fill(seed.jsmith.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.baseUrl}/profile/applications`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Applications');
    expect(await page.getByRole('row', { name: /Example App/ }).count()).toBe(1);
    // The stylesheet loaded under style-src 'self'.
    expect(await page.evaluate(() => getComputedStyle(document.body).margin)).toBe('0px');
  });

  it('registers an application and shows its App ID and App Secret once', async () => {
    await page.getByLabel('Name', { exact: true }).fill('Browser Client');
    await page.getByLabel('Redirect URIs').fill(callbackUrl);
    await page.getByRole('checkbox', { name: /^api\b/ }).uncheck();
    await page.getByRole('checkbox', { name: /^read_user\b/ }).check();
    await page.getByRole('button', { name: 'Save application' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Application: Browser Client');
    appId = await page.getByLabel('App ID').inputValue();
    appSecret = await page.getByLabel('App Secret').inputValue();
    expect(appId).not.toBe('');
    expect(appSecret).toMatch(/^tbcs_/);
    expect(await page.getByText('will not be shown again').count()).toBe(1);

    await page.getByRole('link', { name: 'Back to applications' }).click();
    const row = page.getByRole('row', { name: /Browser Client/ });
    expect(await row.textContent()).toContain(appId);
    expect(await page.content()).not.toContain(appSecret);
    expect(await row.getByRole('button', { name: 'Delete Browser Client' }).count()).toBe(1);
  });

  it('authorizes the application and returns to the client with a code and the state', async () => {
    await page.goto(authorizeUrl(appId, 'browser-state'));
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Authorize Browser Client to use your account?');
    expect(await page.getByRole('list', { name: 'This application will be able to:' }).textContent()).toContain('read_user');
    expect(await page.getByRole('button', { name: 'Deny' }).isVisible()).toBe(true);

    await page.getByRole('button', { name: 'Authorize' }).click();
    await page.waitForURL((url) => url.href.startsWith(callbackUrl));
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Callback received');
    const callback = new URL(page.url());
    expect(callback.searchParams.get('state')).toBe('browser-state');
    const code = callback.searchParams.get('code')!;

    const response = await fetch(`${server.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: callbackUrl, client_id: appId, client_secret: appSecret }),
    });
    expect(response.status).toBe(200);
    const token = (await response.json()) as { access_token: string; scope: string };
    expect(token.scope).toBe('read_user');
    const me = await fetch(`${server.baseUrl}/api/v3/user`, { headers: { authorization: `Bearer ${token.access_token}` } });
    expect((await me.json()).username).toBe('jsmith');
  });

  it('lists the application as authorized, skips the consent page while its token lives, and after a revocation a denial reaches the client as access_denied', async () => {
    await page.goto(`${server.baseUrl}/profile/applications`);
    const authorized = page.getByRole('region', { name: 'Authorized applications' });
    expect(await authorized.getByRole('button', { name: 'Revoke Browser Client' }).count()).toBe(1);

    // As on the service: the same request from a user holding a live token of this confidential client comes straight back.
    await page.goto(authorizeUrl(appId, 'again-state'));
    await page.waitForURL((url) => url.href.startsWith(callbackUrl));
    expect(new URL(page.url()).searchParams.get('code')).toEqual(expect.any(String));

    await page.goto(`${server.baseUrl}/profile/applications`);
    await authorized.getByRole('button', { name: 'Revoke Browser Client' }).click();
    await page.waitForURL(`${server.baseUrl}/profile/applications`);
    expect(await authorized.getByRole('button', { name: 'Revoke Browser Client' }).count()).toBe(0);

    await page.goto(authorizeUrl(appId, 'deny-state'));
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL((url) => url.href.startsWith(callbackUrl));
    const callback = new URL(page.url());
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('state')).toBe('deny-state');
  });

  it('work by keyboard alone and without JavaScript: sign in and authorize, every focus visible', async () => {
    const plain = await browser.newContext({ ...contextOptions('desktop'), javaScriptEnabled: false });
    try {
      const keys = await plain.newPage();
      // The outline of what has focus, read through the DevTools protocol (no page script runs).
      const focusOutline = async () => {
        const focused = keys.locator(':focus');
        return { name: (await focused.getAttribute('name')) ?? (await focused.textContent()), outline: await focused.evaluate((e) => parseFloat(getComputedStyle(e).outlineWidth)) };
      };
      await keys.goto(authorizeUrl(appId, 'keyboard-state'));
      await expect.poll(() => new URL(keys.url()).pathname).toBe('/users/sign_in');
      await keys.keyboard.press('Tab');
      expect(await focusOutline()).toEqual({ name: 'Skip to content', outline: 3 });
      await keys.keyboard.press('Enter');
      for (const [field, value] of [['login', seed.jsmith.username], ['password', seed.jsmith.password]] as const) {
        // From the skip link's target, the first stops are the form's fields, in order.
        await keys.keyboard.press('Tab');
        expect(await focusOutline()).toEqual({ name: field, outline: 3 });
        await keys.keyboard.type(value);
      }
      await keys.keyboard.press('Enter');
      await expect.poll(() => keys.getByRole('heading', { level: 1 }).textContent()).toBe('Authorize Browser Client to use your account?');
      await keys.getByRole('button', { name: 'Authorize' }).focus();
      expect(await focusOutline()).toEqual({ name: 'decision', outline: 3 });
      await keys.keyboard.press('Enter');
      await keys.waitForURL((url) => url.href.startsWith(callbackUrl));
      expect(new URL(keys.url()).searchParams.get('state')).toBe('keyboard-state');
    } finally {
      await plain.close();
    }
  });

  it('signs out with the navigation button', async () => {
    await page.goto(`${server.baseUrl}/profile/personal_access_tokens`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${server.baseUrl}/users/sign_in`);
    await page.goto(`${server.baseUrl}/profile/personal_access_tokens`);
    await expect.poll(() => new URL(page.url()).pathname).toBe('/users/sign_in');
  });

  it('signs a two-factor account in with its password and then its authenticator code', async () => {
    await page.goto(`${server.baseUrl}/profile/personal_access_tokens`);
    await expect.poll(() => new URL(page.url()).pathname).toBe('/users/sign_in');
    await page.getByLabel('Username or e-mail').fill(seed.awong.username);
    await page.getByLabel('Password').fill(seed.awong.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Two-factor authentication');
    await checkPage(page, 'two-factor', 'desktop', { signedInAs: null });
    await page.getByLabel('Code').fill(currentCode(seed.awong.otp_secret, server.now() - 60));
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Invalid code.');
    await page.getByLabel('Code').fill(currentCode(seed.awong.otp_secret, server.now()));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${server.baseUrl}/profile/personal_access_tokens`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Personal access tokens');
  });

  it('met no Content Security Policy violation on the way', () => {
    expect(browser.cspViolations).toEqual([]);
  });
});
