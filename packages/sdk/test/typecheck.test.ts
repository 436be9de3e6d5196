import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

// The root tsconfig.json, which vitest's typecheck mode runs tsc with, does not include
// packages/*/test, so types.test-d.ts would pass without being checked. This runs tsc over the
// SDK's tests (and src) itself, making its expectTypeOf and @ts-expect-error lines count.
it('type-checks test/ including types.test-d.ts', { timeout: 120_000 }, async () => {
  const pkgDir = fileURLToPath(new URL('..', import.meta.url));
  const tsc = join(pkgDir, '..', '..', 'node_modules', '.bin', 'tsc');
  const result = await promisify(execFile)(tsc, ['-p', join(pkgDir, 'test', 'tsconfig.json')], { cwd: pkgDir }).then(
    ({ stdout }) => stdout,
    (error: { stdout: string }) => error.stdout,
  );
  expect(result.trim()).toBe('');
});
