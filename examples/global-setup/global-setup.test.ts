// A globalSetup runs once per vitest run, in its main process, so the example cannot be one more file of this run:
// this starts it as a run of its own, as `npx vitest run --config examples/global-setup/vitest.config.ts` would.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { repoRoot } from '../../scripts/lib/paths.js';

it('runs the global-setup example: one tokenbell started for the run, its spec files on it over HTTP', async () => {
  const result = await new Promise<{ code: number | string | null; output: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(repoRoot, 'node_modules/vitest/vitest.mjs'), 'run', '--config', 'examples/global-setup/vitest.config.ts', '--reporter', 'verbose'],
      // Without colours, so that the names below are in the output as written, not split by escape codes.
      // The run takes 3-6 s; the bound leaves room for a machine busy with the rest of `npm test`, and ends before the
      // test's own timeout so that a hung run fails with its output.
      { cwd: repoRoot, timeout: 45_000, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } },
      (error, stdout, stderr) => resolve({ code: error ? (error.code ?? error.signal ?? null) : 0, output: `${stdout}${stderr}` }),
    );
  });
  expect(result.code, `the example's vitest run exited ${result.code}:\n${result.output}`).toBe(0);
  for (const name of [
    'reads the seeded user with a token minted for them',
    'adds a user and signs them in',
    'finds that user and their token gone in the next test',
  ]) {
    expect(result.output, result.output).toContain(`app.spec.ts > ${name}`);
  }
}, 60_000);
