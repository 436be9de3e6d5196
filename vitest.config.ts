import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Tests that build a package's dist share it (the benchmark, the pack tests, and `npm start`'s, which copies the
// checkout's last build): test/builds.test.ts runs them one after the other, and no project includes them itself.
const builds = ['bench/**/*.test.ts', 'packages/*/test/package.test.ts', 'test/scripts/start.test.ts'];

/**
 * vitest's order (by project, then the longest or largest first), but test/builds.test.ts first of all: one file of
 * about four minutes, it would otherwise start last, small and in the last project by name, and end the run alone.
 */
class BuildsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const isBuilds = (file: TestSpecification) => file.moduleId.endsWith('/test/builds.test.ts');
    return [...sorted.filter(isBuilds), ...sorted.filter((file) => !isBuilds(file))];
  }
}

export default defineConfig({
  // The examples import the packages as an app would; here those names are this checkout's sources, not a build.
  resolve: {
    alias: [
      { find: /^@tokenbell\/server\/testing$/, replacement: fileURLToPath(new URL('./packages/server/src/testing.ts', import.meta.url)) },
      { find: /^@tokenbell\/sdk\/test-helpers$/, replacement: fileURLToPath(new URL('./packages/sdk/src/test-helpers.ts', import.meta.url)) },
      // The server's own imports of the SDK too, so that one class of each error is thrown and caught.
      { find: /^@tokenbell\/sdk$/, replacement: fileURLToPath(new URL('./packages/sdk/src/index.ts', import.meta.url)) },
    ],
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two files at a time, at least: vitest's default is one fewer than the cores, which is one on a 2-core CI machine,
    // and most of a file's time here is spent waiting on the servers, databases and browsers it starts.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // The files of a project share their workers' module cache, rather than each importing everything again in a
    // fresh one: the run's import time went from 161 s to 20 s. So a test restores what it changes outside its own
    // objects (spies on shared modules, environment variables, the time zone), and stops every server it starts.
    isolate: false,
    sequence: { sequencer: BuildsFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'tests',
          include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'examples/**/*.test.ts'],
          // A throwaway PostgreSQL cluster for the run (test/support/postgres.ts), and the server bundled as it ships,
          // which the tests that start it as a process run.
          globalSetup: ['test/support/postgres-global-setup.ts', 'test/support/server-build-global-setup.ts'],
          exclude: [...configDefaults.exclude, ...builds],
          typecheck: {
            enabled: true,
            include: ['packages/*/test/**/*.test-d.ts', 'test/**/*.test-d.ts'],
          },
        },
      },
      {
        // The HTTP, hardening, client and contract suites again, every server in them on a fresh PostgreSQL database
        // (startTestServer, the hardening tests' CLI and the contract suite's reference server read
        // TOKENBELL_TEST_STORE).
        extends: true,
        test: {
          name: 'postgres',
          include: [
            'packages/server/test/http/**/*.test.ts',
            'packages/server/test/hardening/**/*.test.ts',
            'test/clients/**/*.test.ts',
            'test/contract/**/*.test.ts',
          ],
          exclude: [
            ...configDefaults.exclude,
            ...builds,
            // The process on its data file (SIGKILL, the file's lock, a corrupt file) and flags that fail before a
            // store opens; its one case about stored state runs on both stores in `tests`, and SIGKILL on PostgreSQL
            // is in test/multi-instance.
            'packages/server/test/hardening/process.test.ts',
            // A PostgreSQL cluster of its own, frozen and shut down under the server: on PostgreSQL already, in `tests`.
            'packages/server/test/hardening/database-outage.test.ts',
            // Two instances on one database: on PostgreSQL already, in `tests`.
            'packages/server/test/http/shared-sessions.test.ts',
            // Server processes started as an operator starts them, on the store each case names (a data file, memory,
            // or a database of its own): the same in both projects.
            'packages/server/test/hardening/operator-start.test.ts',
            // `tokenbell users` reading its secrets and printing to a closed output, on a data file: the store makes no
            // difference there (users-cli.test.ts runs the commands on both).
            'packages/server/test/hardening/users-secrets.test.ts',
          ],
          env: { TOKENBELL_TEST_STORE: 'postgres' },
          globalSetup: ['test/support/postgres-global-setup.ts', 'test/support/server-build-global-setup.ts'],
        },
      },
    ],
  },
});
