// Before packing: the build never empties dist/ (a server started from it may still load a chunk or serve the
// reference later), so files of earlier builds stay there: chunks this build no longer makes, the JavaScript tsc
// wrote per module before the server was bundled, the declarations of a source since deleted. The tarball must hold
// only what this build made: JavaScript not listed in dist/bundle.json (scripts/bundle.mjs) is removed here, and each
// declaration whose source is gone. A server running the current build never loads those files; one running an
// older build may, and packing is when that is acceptable.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

const bundled = new Set(JSON.parse(readFileSync('dist/bundle.json', 'utf8')));

/** The source a declaration came from: dist/a/b.d.ts from src/a/b.ts, .d.cts from .cts. */
function sourceOf(file) {
  const match = /^(.+?)\.d\.(c?)ts$/.exec(file);
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
  // Not built from a source (the document, Swagger UI's files, the build's records): copy-assets keeps those.
  if (file.startsWith('reference-ui/')) continue;
  const source = sourceOf(file);
  const stale = /\.c?js(\.map)?$/.test(file) ? !bundled.has(file) : source !== undefined && !existsSync(source);
  if (stale) {
    rmSync(path);
    console.log(`removed ${path}: not part of this build`);
  }
}
