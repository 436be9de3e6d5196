// The device flow (RFC 8628) with a person in Chromium and a command-line tool polling over real HTTP, at a desktop and
// a phone width: one user follows the link with the code in it, signs in on the way and authorizes, and the tool gets
// tokens; another types the code by hand, as people do, and denies, and the tool gets access_denied. The sign-in on the
// way names the device's application, the confirmation who made it; each page passes support/page-checks.ts (layout,
// fit, axe-core), and screenshots land beside the other pages' in test-results/screenshots/.
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerApplication } from '../../src/domain/applications.js';
import { launchChromium, screenshotsDir, type TestBrowser } from '../support/browser.js';
import { checkPage, contextOptions, widths, type Width } from '../support/page-checks.js';
import { form, seed, startTestServer, type TestServer } from '../support/server.js';

interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  interval: number;
}

let server: TestServer;
let browser: TestBrowser;
let clientId: string;

beforeAll(async () => {
  mkdirSync(screenshotsDir, { recursive: true });
  browser = await launchChromium();
  server = await startTestServer();
  const owner = (await server.storage.users.byUsername('jsmith'))!;
  clientId = (await registerApplication(server.storage, owner.id, { name: 'Example CLI', redirect_uris: ['http://127.0.0.1/unused'], scopes: ['read_user'], confidential: false })).record.uid;
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** The tool's side: asks for codes over HTTP, as a CLI would. */
async function startDevice(): Promise<DeviceAuthorization> {
  const response = await fetch(`${server.baseUrl}/oauth/authorize_device`, form({ client_id: clientId }));
  expect(response.status).toBe(200);
  return (await response.json()) as DeviceAuthorization;
}

/**
 * The tool polling while the person answers: each round moves the server's clock by the interval (so that no poll is
 * early) and waits a little real time, until an answer other than authorization_pending; about 18 real seconds before
 * the code would expire.
 */
async function pollUntilAnswered(device: DeviceAuthorization): Promise<{ status: number; body: Record<string, unknown>; polls: number }> {
  for (let polls = 1; ; polls++) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    server.advance(device.interval);
    const response = await fetch(`${server.baseUrl}/oauth/token`, form({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: device.device_code, client_id: clientId }));
    const body = (await response.json()) as Record<string, unknown>;
    if (body.error !== 'authorization_pending') return { status: response.status, body, polls };
  }
}

const heading = (page: Page) => page.getByRole('heading', { level: 1 }).textContent();

describe.each(Object.keys(widths) as Width[])('the device flow at %s width', (width) => {
  const newPage = async () => {
    const context = await browser.newContext(contextOptions(width));
    return context.newPage();
  };

  it('a user follows the link, signs in on the way, authorizes, and the tool gets tokens', async () => {
    const device = await startDevice();
    const tool = pollUntilAnswered(device);
    const page = await newPage();
    await page.goto(device.verification_uri_complete);
    await expect.poll(() => new URL(page.url()).pathname).toBe('/users/sign_in');
    expect(await page.getByText('is asking for access to your account').textContent()).toBe('Example CLI is asking for access to your account. Sign in to continue.');
    await checkPage(page, 'sign-in-device', width, { signedInAs: null });
    await page.getByLabel('Username or e-mail').fill(seed.jsmith.username);
    await page.getByLabel('Password').fill(seed.jsmith.password);
    await page.getByRole('button', { name: 'Sign in' }).click();

    await expect.poll(() => heading(page)).toBe('Connect a device');
    const displayed = `${device.user_code.slice(0, 4)}-${device.user_code.slice(4)}`;
    expect(await page.getByLabel('Code').inputValue()).toBe(displayed);
    await checkPage(page, 'device-code', width, { signedInAs: 'jsmith' });
    await page.getByRole('button', { name: 'Continue' }).click();

    await expect.poll(() => heading(page)).toBe('Authorize Example CLI to use your account?');
    expect(await page.getByRole('list', { name: 'This application will be able to:' }).textContent()).toContain('read_user');
    expect(await page.getByText(displayed, { exact: true }).count()).toBe(1);
    expect(await page.getByText('This application was created by').textContent()).toMatch(/^This application was created by Jane Smith \(@jsmith\)\./);
    await checkPage(page, 'device-confirm', width, { signedInAs: 'jsmith' });
    await page.getByRole('button', { name: 'Authorize' }).click();

    await expect.poll(() => heading(page)).toBe('Device connected');
    expect(await page.getByRole('status').textContent()).toContain('Example CLI can now use your account jsmith.');
    await checkPage(page, 'device-connected', width, { signedInAs: 'jsmith' });

    const answer = await tool;
    expect(answer).toMatchObject({ status: 200, body: { token_type: 'bearer', scope: 'read_user', refresh_token: expect.any(String) } });
    expect(answer.polls).toBeGreaterThan(1);
    const me = await fetch(`${server.baseUrl}/api/v3/user`, { headers: { authorization: `Bearer ${answer.body.access_token as string}` } });
    expect(await me.json()).toMatchObject({ username: 'jsmith' });
    await page.context().close();
  });

  it('another user types the code by hand and denies, and the tool gets access_denied', async () => {
    const device = await startDevice();
    const tool = pollUntilAnswered(device);
    const page = await newPage();
    await page.goto(`${server.baseUrl}/users/sign_in`);
    await page.getByLabel('Username or e-mail').fill(seed.mallory.username);
    await page.getByLabel('Password').fill(seed.mallory.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${server.baseUrl}/profile/applications`);

    await page.goto(device.verification_uri);
    expect(await page.getByLabel('Code').inputValue()).toBe('');
    // A wrong code first: the page says so and asks again.
    await page.getByLabel('Code').fill('zzzz-zzzz');
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('No device is waiting for this code. Check the code your device shows and enter it again.');
    await checkPage(page, 'device-wrong-code', width, { signedInAs: seed.mallory.username });
    await page.getByLabel('Code').fill(`${device.user_code.slice(0, 4).toLowerCase()} ${device.user_code.slice(4).toLowerCase()}`);
    await page.getByRole('button', { name: 'Continue' }).click();

    await expect.poll(() => heading(page)).toBe('Authorize Example CLI to use your account?');
    await page.getByRole('button', { name: 'Deny' }).click();
    await expect.poll(() => heading(page)).toBe('Device denied');
    await checkPage(page, 'device-denied', width, { signedInAs: seed.mallory.username });

    expect(await tool).toMatchObject({ status: 400, body: { error: 'access_denied' } });
    await page.context().close();
  });

  it('raised no Content Security Policy violation', () => {
    expect(browser.cspViolations).toEqual([]);
  });
});
