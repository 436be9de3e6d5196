// Debian's Chromium driven by playwright-core, for the browser tests: launched headless, with every Content Security
// Policy violation a page reports collected so that a test can require none.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions } from 'playwright-core';

export const chromiumPath = '/usr/bin/chromium';
/** Where the browser tests leave their screenshots, for people to look at. */
export const screenshotsDir = fileURLToPath(new URL('../../../../test-results/screenshots/', import.meta.url));

export interface TestBrowser {
  browser: Browser;
  /** A fresh context (its own cookies); its pages report CSP violations into `cspViolations`. */
  newContext(options?: BrowserContextOptions): Promise<BrowserContext>;
  cspViolations: string[];
  close(): Promise<void>;
}

export async function launchChromium(): Promise<TestBrowser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(`Chromium is required for the browser tests but ${chromiumPath} does not exist; install it (apt-get install chromium), as .ci/run does.`);
  }
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const cspViolations: string[] = [];
  return {
    browser,
    cspViolations,
    async newContext(options) {
      const context = await browser.newContext(options);
      // Well inside the test timeout, so a blocked navigation fails with playwright's message rather than a bare timeout.
      context.setDefaultTimeout(10_000);
      context.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) cspViolations.push(`${message.page()?.url() ?? ''}: ${message.text()}`);
      });
      return context;
    },
    close: () => browser.close(),
  };
}
