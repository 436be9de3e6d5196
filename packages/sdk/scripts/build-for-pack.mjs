// The pack's build: tsup, then every file of dist/ this build did not write is removed. The build never empties
// dist/ (a server started from this checkout may load a chunk of the SDK after a rebuild), and chunks are named by
// their content, so each change leaves the previous chunks behind; the tarball must hold only this build's files.
// tsup writes every output on each build, so "not written by this build" is "last written before it started".
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

const started = Date.now();
execFileSync('npm', ['run', 'build'], { stdio: 'inherit' });
for (const name of readdirSync('dist')) {
  const path = join('dist', name);
  if (statSync(path).mtimeMs < started) {
    rmSync(path, { recursive: true });
    console.log(`removed ${path}: not part of this build`);
  }
}
