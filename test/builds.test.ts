// The tests that build or pack a package's dist share it: the benchmark (it builds both packages and runs the built
// server), the two pack tests (`npm pack` builds first, and prunes) and `npm start`'s (it copies the checkout's last
// build). They run one after the other, in this one file, which vitest schedules beside the rest of the suite. As a
// project of their own without file parallelism they ran after every other file instead (vitest puts such a project
// in a group of its own, last), with the second core idle for their four minutes.
//
// Each is imported inside a describe of its own, so that its top-level hooks run around its own tests only. To run
// one: `npx vitest run test/builds.test.ts -t 'npm pack'` (a describe's name below).
import { describe } from 'vitest';

describe('@tokenbell/sdk, npm pack', async () => {
  await import('../packages/sdk/test/package.test.js');
});
describe('@tokenbell/server, npm pack', async () => {
  await import('../packages/server/test/package.test.js');
});
describe('npm start', async () => {
  await import('./scripts/start.test.js');
});
describe('npm run bench', async () => {
  await import('../bench/bench.test.js');
});
