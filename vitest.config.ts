import { configDefaults, defineConfig } from 'vitest/config';

// Tests that build a package's dist (the benchmark and the pack tests) share it with each other, so they run one at
// a time, after everything else; nothing else reads dist.
const builds = ['bench/**/*.test.ts', 'packages/*/test/package.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'tests',
          include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
          // A throwaway PostgreSQL cluster for the run (test/support/postgres.ts).
          globalSetup: ['test/support/postgres-global-setup.ts'],
          exclude: [...configDefaults.exclude, ...builds],
          sequence: { groupOrder: 0 },
          typecheck: {
            enabled: true,
            include: ['packages/*/test/**/*.test-d.ts', 'test/**/*.test-d.ts'],
          },
        },
      },
      {
        extends: true,
        test: {
          name: 'builds',
          include: builds,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
