// How the pages look and read in Chromium at a desktop and a phone width: every page fits the screen (no horizontal
// scrolling), the error page explains itself and offers a way back, the sign-in page names the application that is
// asking, and the API reference renders the served document under its own CSP. Screenshots of each page at both
// widths land in test-results/screenshots/ for people to look at; the assertions are the layout facts.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { document as openapi } from '../../src/openapi/document.js';
import { launchChromium, screenshotsDir, type TestBrowser } from '../support/browser.js';
import { seed, startTestServer, type TestServer } from '../support/server.js';


const widths = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
type Width = keyof typeof widths;

let server: TestServer;
let browser: TestBrowser;
const pages = {} as Record<Width, { context: BrowserContext; page: Page }>;
const notFound: string[] = [];

beforeAll(async () => {
  mkdirSync(screenshotsDir, { recursive: true });
  browser = await launchChromium();
  server = await startTestServer();
  for (const [name, viewport] of Object.entries(widths) as [Width, (typeof widths)[Width]][]) {
    const context = await browser.newContext({ viewport, ...(name === 'phone' ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}) });
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

/**
 * How far the page is wider than the screen, in CSS pixels (0 when it fits). Measured against the viewport asked for:
 * a mobile browser widens its layout viewport to content that overflows, so window.innerWidth would hide it.
 */
const overflow = async (page: Page) => (await page.evaluate(() => document.documentElement.scrollWidth)) - page.viewportSize()!.width;

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
    expect(await overflow(page())).toBeLessThanOrEqual(0);
    await shoot(page(), 'landing', width);
  });

  it('the sign-in page names the application that asks for access', async () => {
    const authorize = `/oauth/authorize?client_id=${seed.client.id}&redirect_uri=${encodeURIComponent(seed.redirectUri)}&response_type=code&scope=api&state=s1`;
    await page().goto(`${server.baseUrl}${authorize}`);
    await expect.poll(() => new URL(page().url()).pathname).toBe('/users/sign_in');
    expect(await page().getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
    expect(await page().getByText('is asking for access to your account').textContent()).toBe('Example App is asking for access to your account. Sign in to continue.');
    expect(await overflow(page())).toBeLessThanOrEqual(0);
    await shoot(page(), 'sign-in-authorization', width);

    await page().getByLabel('Username or e-mail').fill(seed.jsmith.username);
    await page().getByLabel('Password').fill(seed.jsmith.password);
    await page().getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page().getByRole('heading', { level: 1 }).textContent()).toBe('Authorize Example App to use your account?');
    expect(await overflow(page())).toBeLessThanOrEqual(0);
    await shoot(page(), 'consent', width);
  });

  it('the applications and personal access tokens pages fit, tables included', async () => {
    await page().goto(`${server.baseUrl}/profile/applications`);
    if (new URL(page().url()).pathname !== '/profile/applications') await signIn(page());
    expect(await page().getByRole('row', { name: /Example App/ }).count()).toBe(1);
    expect(await overflow(page())).toBeLessThanOrEqual(0);
    await shoot(page(), 'applications', width);

    await page().goto(`${server.baseUrl}/profile/personal_access_tokens`);
    await page().getByLabel('Name', { exact: true }).fill(`a token to see the table at ${width} width`);
    await page().getByRole('checkbox', { name: /^read_api\b/ }).check();
    await page().getByRole('button', { name: 'Create personal access token' }).click();
    expect(await page().getByRole('textbox', { name: 'Your new personal access token' }).inputValue()).toMatch(/^tbpat-/);
    expect(await overflow(page())).toBeLessThanOrEqual(0);
    await page().getByRole('link', { name: 'Back to personal access tokens' }).click();
    await expect.poll(() => page().getByRole('row', { name: new RegExp(`at ${width} width`) }).count()).toBe(1);
    expect(await overflow(page())).toBeLessThanOrEqual(0);
    await shoot(page(), 'personal-access-tokens', width);
  });

  it("the demo application's callback page fits, its curl command wrapped rather than scrolled", async () => {
    await page().goto(`${server.baseUrl}/demo/callback?code=${'c'.repeat(64)}&state=${'s'.repeat(40)}`);
    expect(await page().locator('pre').count()).toBeGreaterThan(0);
    expect(await overflow(page())).toBeLessThanOrEqual(0);
    await shoot(page(), 'demo-callback', width);
  });

  it('the error page says what happened in plain words and offers a way back', async () => {
    const response = await page().goto(`${server.baseUrl}/oauth/authorize?client_id=nobody&response_type=code&redirect_uri=https%3A%2F%2Fexample.com%2Fcb`);
    expect(response?.status()).toBe(400);
    expect(await page().getByRole('heading', { level: 1 }).textContent()).toBe('This request could not be handled');
    expect(await page().getByRole('alert').textContent()).toBe('Client authentication failed due to unknown client.');
    expect(await page().locator('main').textContent()).toContain('The application that sent you here is not registered on this server');
    expect(await page().getByRole('link', { name: /home page/i }).getAttribute('href')).toBe('/');
    expect(await overflow(page())).toBeLessThanOrEqual(0);
    await shoot(page(), 'error', width);

    await page().goto(`${server.baseUrl}/no/such/page`);
    expect(await page().getByRole('heading', { level: 1 }).textContent()).toBe('Page not found');
    expect(await page().getByRole('link', { name: /home page/i }).count()).toBe(1);
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
