// A vitest run of its own, since a globalSetup belongs to a whole run: `npx vitest run --config
// examples/global-setup/vitest.config.ts`. Its files are *.spec.ts so that the repository's run, which takes
// examples/**/*.test.ts, leaves them to this one (global-setup.test.ts starts it).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import repository from '../../vitest.config.js';

export default defineConfig({
  // Here rather than the working directory, so that the include below finds this folder's files wherever it is run.
  root: fileURLToPath(new URL('.', import.meta.url)),
  // The package names are this checkout's sources, as in the repository's run.
  resolve: repository.resolve,
  test: {
    include: ['**/*.spec.ts'],
    // One tokenbell for the run, seeded from this folder's tokenbell.seed.json (the root above). In a project of your
    // own this is `globalSetup: ['@tokenbell/server/vitest']`; here it is the name's source in this checkout, as for
    // the imports, since vitest finds a globalSetup as a file, without resolve.alias.
    globalSetup: [fileURLToPath(new URL('../../packages/server/src/vitest.ts', import.meta.url))],
    // Every file shares the one instance and resets it before each test, so files must not run at the same time:
    // one file's reset would wipe what another's test is in the middle of.
    fileParallelism: false,
  },
});
