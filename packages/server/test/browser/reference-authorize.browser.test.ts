// The API reference's "Authorize" button on a fresh instance: Swagger UI runs the authorization code grant with PKCE
// through the sign-in and consent pages in a popup, back to its own redirect page (which the demo application
// registers), and exchanges the code with its verifier.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ensureDemoData, type DemoCredentials } from '../../src/domain/seed/demo.js';
import { referenceOAuthRedirectPath } from '../../src/pages/reference.js';
import { launchChromium, type TestBrowser } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let browser: TestBrowser;
let demo: DemoCredentials;
beforeAll(async () => {
  server = await startTestServer({ seed: {} });
  // As the server makes it at its first start (cli/serve.ts).
  demo = (await ensureDemoData(server.storage, server.baseUrl, [`${server.baseUrl}${referenceOAuthRedirectPath}`]))!;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

it('authorizes the reference with PKCE through the sign-in and consent pages, and holds the token it got', { timeout: 60_000 }, async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${server.baseUrl}/help/api`);
  await page.locator('button.authorize').first().click();
  const flow = page.locator('.auth-container').filter({ has: page.locator('#client_id_authorizationCode') });
  await flow.locator('#client_id_authorizationCode').fill(demo.client_id);
  await flow.locator('#client_secret_authorizationCode').fill(demo.client_secret);
  await flow.getByText('select all', { exact: true }).click();
  const authorizeRequests: URL[] = [];
  context.on('request', (request) => {
    if (new URL(request.url()).pathname === '/oauth/authorize' && request.method() === 'GET') authorizeRequests.push(new URL(request.url()));
  });
  const tokenResponse = page.waitForResponse((response) => new URL(response.url()).pathname === '/oauth/token', { timeout: 30_000 });
  const [popup] = await Promise.all([context.waitForEvent('page'), flow.locator('button.modal-btn.authorize').click()]);
  await popup.waitForLoadState('domcontentloaded');
  const authorizeUrl = authorizeRequests[0]!;
  expect(authorizeUrl.searchParams.get('code_challenge_method')).toBe('S256');
  expect(authorizeUrl.searchParams.get('redirect_uri')).toBe(`${server.baseUrl}${referenceOAuthRedirectPath}`);
  await popup.getByLabel('Username or e-mail').fill(demo.username);
  await popup.getByLabel('Password').fill(demo.password);
  await popup.getByRole('button', { name: 'Sign in' }).click();
  await popup.getByRole('button', { name: 'Authorize' }).click();
  await popup.waitForEvent('close', { timeout: 15_000 });
  // Back in the reference: it exchanged the code with the verifier at the token endpoint and holds the token.
  const exchange = await tokenResponse;
  expect(exchange.status()).toBe(200);
  expect(new URLSearchParams(exchange.request().postData() ?? '').get('code_verifier')).toMatch(/^[A-Za-z0-9._~-]{43,128}$/);
  await expect.poll(() => page.locator('.auth-container button', { hasText: 'Logout' }).count(), { timeout: 15_000 }).toBeGreaterThan(0);
  expect(browser.cspViolations).toEqual([]);
  await context.close();
});
