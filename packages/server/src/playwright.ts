// `@tokenbell/server/playwright`: Playwright Test's `test` with a worker-scoped `tokenbell` fixture, one instance per
// worker started on first use and closed when the worker ends. Its options are the worker option `tokenbellOptions`
// (in playwright.config.ts `use`, or `test.use` in a file); without them, the seed file that TOKENBELL_SEED or
// tokenbell.seed.json in the working directory names. Tests share their worker's instance: reset it in a beforeEach
// (`test.beforeEach(({ tokenbell }) => tokenbell.helpers.reset())`) where one test must not see another's changes.
import { test as base } from '@playwright/test';
import { optionsFromEnvironment } from './kit/environment.js';
import { startTokenbell, type RunningTokenbell, type StartTokenbellOptions } from './testing.js';

export { expect } from '@playwright/test';
export type { RunningTokenbell, StartTokenbellOptions } from './testing.js';

export interface TokenbellWorkerFixtures {
  /** The worker's tokenbell: its `url`, `adminToken` and in-process `helpers`. */
  tokenbell: RunningTokenbell;
  /** How the worker's tokenbell starts; from TOKENBELL_SEED or tokenbell.seed.json when not set. */
  tokenbellOptions: StartTokenbellOptions | undefined;
}

// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export const test = base.extend<{}, TokenbellWorkerFixtures>({
  tokenbellOptions: [undefined, { scope: 'worker', option: true }],
  tokenbell: [
    async ({ tokenbellOptions }, use) => {
      const tokenbell = await startTokenbell(tokenbellOptions ?? optionsFromEnvironment(process.cwd()));
      try {
        await use(tokenbell);
      } finally {
        await tokenbell.close();
      }
    },
    { scope: 'worker' },
  ],
});
