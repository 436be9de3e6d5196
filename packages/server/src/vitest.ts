// `@tokenbell/server/vitest`: a vitest globalSetup that starts one tokenbell for the run, in vitest's main process,
// and `provide`s what crosses to the test files' workers: the URL and an administrator's token.
//
//   // vitest.config.ts
//   test: { globalSetup: ['@tokenbell/server/vitest'], fileParallelism: false }
//
// The seed is the file TOKENBELL_SEED names, else tokenbell.seed.json in the project's root, else none. For other
// options, a setup file of one line: `export default tokenbellGlobalSetup({ seed: { ... }, config: { tokenTtl: 60 } })`.
// Test files read `inject('tokenbellUrl')` and `inject('tokenbellAdminToken')`, typed once this module is in the
// program (`/// <reference types="@tokenbell/server/vitest" />`, or any import from it).
// Named so that the augmentation below finds the module (without an import of it, tsc answers TS2664 here).
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { optionsFromEnvironment } from './kit/environment.js';
import { startTokenbell, type StartTokenbellOptions } from './testing.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The base URL of the run's tokenbell, e.g. http://127.0.0.1:41234. */
    tokenbellUrl: string;
    /** An administrator's personal access token, for `createTokenbellTestHelpers({ baseUrl, token })`. */
    tokenbellAdminToken: string;
  }
}

/** What vitest calls with the project; the function it answers stops tokenbell after the last file. */
export type TokenbellGlobalSetup = (project: TestProject) => Promise<() => Promise<void>>;

/**
 * A globalSetup that starts tokenbell with `options`, or, when they are not given, with the seed file that
 * `TOKENBELL_SEED` or the project's `tokenbell.seed.json` names.
 */
export function tokenbellGlobalSetup(options?: StartTokenbellOptions): TokenbellGlobalSetup {
  return async (project) => {
    const tokenbell = await startTokenbell(options ?? optionsFromEnvironment(project.config.root));
    project.provide('tokenbellUrl', tokenbell.url);
    project.provide('tokenbellAdminToken', tokenbell.adminToken);
    return () => tokenbell.close();
  };
}

/** The one-line setup: `globalSetup: ['@tokenbell/server/vitest']`. */
export default tokenbellGlobalSetup();
