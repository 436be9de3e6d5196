// `@tokenbell/server/jest`: a Jest globalSetup (CommonJS, as Jest loads it) that starts one tokenbell for the run,
// with `@tokenbell/server/jest/teardown` as the globalTeardown that stops it:
//
//   // jest.config.js
//   module.exports = { globalSetup: '@tokenbell/server/jest', globalTeardown: '@tokenbell/server/jest/teardown' };
//
// Jest runs the setup in its main process and the test files elsewhere, so what crosses is environment variables,
// set here before the workers start: TOKENBELL_URL and TOKENBELL_TEST_HELPERS_TOKEN (an administrator's personal access token), the
// names `tokenbell test-helpers` reads. The seed is the file TOKENBELL_SEED names (relative to Jest's rootDir), else
// tokenbell.seed.json in rootDir, else none.
import type { RunningTokenbell } from './testing.js';

/** Where the setup leaves the instance for the teardown: Jest runs both in its main process, with one global object. */
const key = Symbol.for('@tokenbell/server/jest');
type Holder = { [key]?: RunningTokenbell };

async function tokenbellJestGlobalSetup(globalConfig: { rootDir: string }, projectConfig?: { rootDir: string }): Promise<void> {
  // Imported, not required: the kit is an ES module, and import() loads it on every Node this package supports.
  const [{ startTokenbell }, { optionsFromEnvironment }] = await Promise.all([import('./testing.js'), import('./kit/environment.js')]);
  const tokenbell = await startTokenbell(optionsFromEnvironment(projectConfig?.rootDir ?? globalConfig.rootDir));
  (globalThis as Holder)[key] = tokenbell;
  process.env.TOKENBELL_URL = tokenbell.url;
  process.env.TOKENBELL_TEST_HELPERS_TOKEN = tokenbell.adminToken;
}

/** Stops what the setup started; nothing when it started nothing. */
async function tokenbellJestGlobalTeardown(): Promise<void> {
  const tokenbell = (globalThis as Holder)[key];
  delete (globalThis as Holder)[key];
  await tokenbell?.close();
}

tokenbellJestGlobalSetup.teardown = tokenbellJestGlobalTeardown;
export = tokenbellJestGlobalSetup;
