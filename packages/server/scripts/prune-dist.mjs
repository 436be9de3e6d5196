// Before packing: the build never empties dist/ (a server started from it may still load a page module or serve the
// reference later), so the outputs of a source file since deleted or renamed stay there. The tarball must hold only
// what this source builds: each compiled file whose source is gone is removed here, and nothing else. A server
// running the current build never loads those files; one running an older build may, and packing is when that is
// acceptable.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

/** The source a compiled file came from: dist/a/b.js, .d.ts and .js.map from src/a/b.ts; .cjs and .d.cts from .cts. */
function sourceOf(file) {
  const match = /^(.+?)(?:\.d)?\.(c?)(?:js|ts)(?:\.map)?$/.exec(file);
  return match ? join('src', `${match[1]}.${match[2]}ts`) : undefined;
}

function* files(directory) {
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else yield path;
  }
}

for (const path of files('dist')) {
  const file = relative('dist', path);
  const source = sourceOf(file);
  // Not compiled from a source (the document, Swagger UI's files, tsc's build record): copy-assets keeps those.
  if (source === undefined || file.startsWith('reference-ui/')) continue;
  if (!existsSync(source)) {
    rmSync(path);
    console.log(`removed ${path}: ${source} is gone`);
  }
}
