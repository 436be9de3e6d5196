import { defineConfig } from 'vitest/config';

// The one line: tokenbell for the whole run, seeded from tokenbell.seed.json; the files share it, so one at a time.
export default defineConfig({
  test: { include: ['vitest/*.vitest.ts'], globalSetup: ['@tokenbell/server/vitest'], fileParallelism: false },
});
