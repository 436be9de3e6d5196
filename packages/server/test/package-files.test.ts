// The package's own files, found from its root in each layout it runs in: the sources here; the bundle's entries and
// chunks at other depths under dist/ (the process tests run that bundle, and the pack test an installed copy).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { fromSource, packageFile, packageRoot } from '../src/package-files.js';

it("finds the server package from its sources, which read the repository's files rather than a build's", () => {
  expect(packageRoot).toBe(fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, ''));
  expect(JSON.parse(readFileSync(packageFile('package.json'), 'utf8')).name).toBe('@tokenbell/server');
  expect(fromSource).toBe(true);
  expect(existsSync(join(packageFile('migrations'), '0001_initial.sql'))).toBe(true);
});
