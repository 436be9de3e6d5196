// How the pages look and read in Chromium at a desktop and a phone width: every page has the one layout (tokenbell's
// header naming who is signed in, the footer with the version and the API reference), fits the screen down to 320 px
// and passes axe-core (support/page-checks.ts); the error page explains itself and offers a way back, the sign-in and
// consent pages name the application that is asking and who made it, and the API reference renders the served
// document under its own CSP. Screenshots of each page at both widths land in test-results/screenshots/.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { document as openapi } from '../../src/openapi/document.js';
import { launchChromium, screenshotsDir, type TestBrowser } from '../support/browser.js';
import { checkPage, contextOptions, overflow, widths, type Width } from '../support/page-checks.js';
import { seed, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let browser: TestBrowser;
const pages = {} as Record<Width, { context: BrowserContext; page: Page }>;
const notFound: string[] = [];

beforeAll(async () => {
  mkdirSync(screenshotsDir, { recursive: true });
  browser = await launchChromium();
  server = await startTestServer();
  for (const name of Object.keys(widths) as Width[]) {
    const context = await browser.newContext(contextOptions(name));
    pages[name] = { context, page: await context.newPage() };
    // Every 404 a page's own requests met (the test's deliberate visit to a missing page aside).
    pages[name].page.on('response', (response) => {
      if (response.status() === 404 && !response.url().endsWith('/no/such/page')) notFound.push(response.url());
    });
  }
});

afterAll(async () => {
  for (const { context } of Object.values(pages)) await context.close();
  await browser?.close();
  await server?.close();
});

async function shoot(page: Page, name: string, width: Width): Promise<void> {
  await page.screenshot({ path: join(screenshotsDir, `${name}-${width}.png`), fullPage: true });
}

async function signIn(page: Page): Promise<void> {
  await page.goto(`${server.baseUrl}/users/sign_in`);
  await page.getByLabel('Username or e-mail').fill(seed.jsmith.username);
  await page.getByLabel('Password').fill(seed.jsmith.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${server.baseUrl}/profile/applications`);
}

describe.each(Object.keys(widths) as Width[])('the pages at %s width', (width) => {
  const page = () => pages[width].page;

  it('the landing page fits, and links the API reference', async () => {
    await page().goto(`${server.baseUrl}/`);
    expect(await page().getByRole('link', { name: 'The API reference' }).getAttribute('href')).toBe('/help/api');
    await checkPage(page(), 'landing', width, { signedInAs: null });
  });

  it('the sign-in page names the application that asks for access', async () => {
    const authorize = `/oauth/authorize?client_id=${seed.client.id}&redirect_uri=${encodeURIComponent(seed.redirectUri)}&response_type=code&scope=api&state=s1`;
    await page().goto(`${server.baseUrl}${authorize}`);
    await expect.poll(() => new URL(page().url()).pathname).toBe('/users/sign_in');
    expect(await page().getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
    expect(await page().getByText('is asking for access to your account').textContent()).toBe('Example App is asking for access to your account. Sign in to continue.');
    await checkPage(page(), 'sign-in-authorization', width, { signedInAs: null });

    await page().getByLabel('Username or e-mail').fill(seed.jsmith.username);
    await page().getByLabel('Password').fill(seed.jsmith.password);
    await page().getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page().getByRole('heading', { level: 1 }).textContent()).toBe('Authorize Example App to use your account?');
    expect(await page().getByText('This application was created by').textContent()).toMatch(/^This application was created by Jane Smith \(@jsmith\)\./);
    expect(await page().getByRole('list', { name: 'This application will be able to:' }).textContent()).toContain('api: Grants complete read/write access to the API');
    await checkPage(page(), 'consent', width, { signedInAs: 'jsmith' });
  });

  it('the applications and personal access tokens pages fit, tables included', async () => {
    await page().goto(`${server.baseUrl}/profile/applications`);
    if (new URL(page().url()).pathname !== '/profile/applications') await signIn(page());
    expect(await page().getByRole('row', { name: /Example App/ }).count()).toBe(1);
    await checkPage(page(), 'applications', width, { signedInAs: 'jsmith' });

    await page().goto(`${server.baseUrl}/profile/personal_access_tokens`);
    await page().getByLabel('Name', { exact: true }).fill(`a token to see the table at ${width} width`);
    await page().getByRole('checkbox', { name: /^read_api\b/ }).check();
    await page().getByRole('button', { name: 'Create personal access token' }).click();
    expect(await page().getByRole('textbox', { name: 'Your new personal access token' }).inputValue()).toMatch(/^tbpat-/);
    await checkPage(page(), 'personal-access-token-created', width, { signedInAs: 'jsmith' });
    await page().getByRole('link', { name: 'Back to personal access tokens' }).click();
    await expect.poll(() => page().getByRole('row', { name: new RegExp(`at ${width} width`) }).count()).toBe(1);
    await checkPage(page(), 'personal-access-tokens', width, { signedInAs: 'jsmith' });
  });

  it("the demo application's callback page fits, its curl command wrapped rather than scrolled", async () => {
    await page().goto(`${server.baseUrl}/demo/callback?code=${'c'.repeat(64)}&state=${'s'.repeat(40)}`);
    expect(await page().locator('pre').count()).toBeGreaterThan(0);
    await checkPage(page(), 'demo-callback', width, { signedInAs: 'jsmith' });
  });

  it('the error page says what happened in plain words and offers a way back', async () => {
    const response = await page().goto(`${server.baseUrl}/oauth/authorize?client_id=nobody&response_type=code&redirect_uri=https%3A%2F%2Fexample.com%2Fcb`);
    expect(response?.status()).toBe(400);
    expect(await page().getByRole('heading', { level: 1 }).textContent()).toBe('This request could not be handled');
    expect(await page().getByRole('alert').textContent()).toBe('Client authentication failed due to unknown client.');
    expect(await page().locator('main').textContent()).toContain('The application that sent you here is not registered on this server');
    expect(await page().getByRole('link', { name: /home page/i }).getAttribute('href')).toBe('/');
    await checkPage(page(), 'error', width, { signedInAs: 'jsmith' });

    // Outside the pages' paths no session is read: the header names nobody rather than offering a sign-in.
    await page().goto(`${server.baseUrl}/no/such/page`);
    expect(await page().getByRole('heading', { level: 1 }).textContent()).toBe('Page not found');
    expect(await page().getByRole('link', { name: /home page/i }).count()).toBe(1);
    await checkPage(page(), 'not-found', width, { signedInAs: undefined });
  });

  it('the API reference renders every operation of the served document', async () => {
    await page().goto(`${server.baseUrl}/help/api`);
    const operations = Object.values(openapi.paths ?? {}).flatMap((item) =>
      ['get', 'put', 'post', 'delete', 'patch'].filter((method) => (item as Record<string, unknown>)[method] !== undefined),
    );
    await expect.poll(() => page().locator('.opblock').count(), { timeout: 15_000 }).toBe(operations.length);
    // Swagger UI found nothing to warn about in the document.
    expect(await page().locator('.errors-wrapper').count()).toBe(0);
    // The server variable names this instance, not the document's default.
    expect(await page().locator('.servers').textContent()).toContain(server.baseUrl);
    expect(await overflow(page())).toBeLessThanOrEqual(0);
    await shoot(page(), 'api-reference', width);
  });
});

it('met no Content Security Policy violation on any page', () => {
  expect(browser.cspViolations).toEqual([]);
});

it('asked for nothing that answered 404, the icon included', () => {
  expect(notFound).toEqual([]);
});
