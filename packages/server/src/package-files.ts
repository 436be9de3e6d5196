// Where the package's own files are (package.json, the document, the migrations, Swagger UI's copy), found once from
// the package's root rather than from each module's place: the same module runs from src/ (tsx, vitest), and from
// the build, where the bundler puts it in an entry or in a shared chunk at whatever depth under dist/ it chose.
import { existsSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** The nearest directory at or above `directory` that holds a package.json: this package's, in every layout. */
function packageRootAbove(directory: string): string {
  for (let current = directory; ; current = dirname(current)) {
    if (existsSync(join(current, 'package.json'))) return current;
    if (dirname(current) === current) throw new Error(`no package.json above ${directory}; reinstall @tokenbell/server`);
  }
}

export const packageRoot = packageRootAbove(here);

/** Running this checkout's TypeScript sources (src/), not a build: the repository's files stand in for the build's. */
export const fromSource = relative(packageRoot, here).split(sep)[0] === 'src';

/** A file of the package, by its path from the package's root (`migrations/`, `dist/openapi.json`). */
export const packageFile = (path: string): string => join(packageRoot, path);
