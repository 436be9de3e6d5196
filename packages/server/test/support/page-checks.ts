// What every page must be in a browser, checked the same way by each browser test: the layout's header (tokenbell's
// name, who is signed in) and footer (the version, the API reference), no literal Markdown, no sideways scrolling at
// the width in use nor at 320 px, and no serious or critical accessibility violation by axe-core. A screenshot of each lands in
// test-results/screenshots/ for people to look at.
import { join } from 'node:path';
import axe from 'axe-core';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { version } from '../../src/version.js';
import { screenshotsDir } from './browser.js';

/** The widths the pages are looked at: a desktop's and a phone's (the screenshots' two). */
export const widths = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
export type Width = keyof typeof widths;
/** The narrowest screen a page must fit without scrolling sideways. */
const narrowest = 320;

export const contextOptions = (width: Width) => ({ viewport: widths[width], ...(width === 'phone' ? { isMobile: true, hasTouch: true, deviceScaleFactor: 1 } : {}) });

/**
 * How far the page is wider than the screen, in CSS pixels (0 when it fits). Measured against the viewport asked for:
 * a mobile browser widens its layout viewport to content that overflows, so window.innerWidth would hide it.
 */
export const overflow = async (page: Page) => (await page.evaluate(() => document.documentElement.scrollWidth)) - page.viewportSize()!.width;

/** axe-core's serious and critical violations of WCAG 2.1 A and AA and its best practices, one line each. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the pages' CSP (script-src 'none') does not govern.
  await page.evaluate(axe.source);
  const results = await page.evaluate(() =>
    (window as unknown as { axe: typeof axe }).axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } }),
  );
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id} (${violation.impact}): ${violation.help} at ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
}

export interface PageExpectations {
  /**
   * The username the header must name as signed in; null when it must offer to sign in instead; undefined where the
   * page reads no session (an error outside the pages' paths), so the header has no account at all.
   */
  signedInAs: string | null | undefined;
}

/** The layout's facts, the page's fit and its accessibility, then its screenshot as `<name>-<width>.png`. */
export async function checkPage(page: Page, name: string, width: Width, { signedInAs }: PageExpectations): Promise<void> {
  const banner = page.getByRole('banner');
  expect(await banner.getByRole('link', { name: 'tokenbell', exact: true }).getAttribute('href'), `${name}: the header's home link`).toBe('/');
  const account = page.getByRole('navigation', { name: 'Account' });
  if (signedInAs === undefined) {
    expect(await account.count(), `${name}: an account in the header`).toBe(0);
  } else if (signedInAs === null) {
    expect(await account.getByRole('link', { name: 'Sign in' }).getAttribute('href'), `${name}: the header's sign-in link`).toBe('/users/sign_in');
  } else {
    expect(await account.textContent(), `${name}: who the header says is signed in`).toContain(`Signed in as ${signedInAs}`);
    expect(await account.getByRole('button', { name: 'Sign out' }).count(), `${name}: the header's sign-out button`).toBe(1);
  }
  const footer = page.getByRole('contentinfo');
  expect(await footer.textContent(), `${name}: the footer's version`).toContain(`tokenbell ${version}`);
  expect(await footer.getByRole('link', { name: 'API reference' }).getAttribute('href'), `${name}: the footer's API reference link`).toBe('/help/api');

  // The document's descriptions are Markdown; a page shows them as words, never with their backticks.
  expect(await page.locator('main').textContent(), `${name}: literal Markdown`).not.toMatch(/`/);
  expect(await overflow(page), `${name}: scrolls sideways at ${width} width`).toBeLessThanOrEqual(0);
  expect(await accessibilityViolations(page), `${name}: axe-core at ${width} width`).toEqual([]);
  await page.screenshot({ path: join(screenshotsDir, `${name}-${width}.png`), fullPage: true });

  if (width === 'phone') {
    const viewport = page.viewportSize()!;
    await page.setViewportSize({ width: narrowest, height: viewport.height });
    try {
      expect(await overflow(page), `${name}: scrolls sideways at ${narrowest} px`).toBeLessThanOrEqual(0);
    } finally {
      await page.setViewportSize(viewport);
    }
  }
}
