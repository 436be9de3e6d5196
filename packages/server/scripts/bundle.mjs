// The server's JavaScript, bundled by esbuild: each entry of the package (and the CLI) is one file, and the modules
// they share, or load only on first use (the pages, PostgreSQL's store, the test-helper area), are chunks under
// dist/chunks/. A start then reads a few files rather than a hundred and more of its own: importing the test kit
// took 217 ms where tsc's file per module took 262. Dependencies stay external, loaded from node_modules as before.
// tsc still writes the declarations (tsconfig.build.json); the jest entries are CommonJS, each transpiled alone.
//
// Chunks are named by their content's hash, so a build never changes a chunk that a running server (from an older
// build) may still import; dist/bundle.json lists this build's files, and packing removes the rest (prune-dist.mjs).
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { update } from './update-file.mjs';

const packageDirectory = fileURLToPath(new URL('..', import.meta.url));
const source = (path) => join(packageDirectory, 'src', path);
const manifest = JSON.parse(readFileSync(join(packageDirectory, 'package.json'), 'utf8'));
/** Every file package.json names (its exports and the bin), by its path in dist/ without the extension. */
const named = [...Object.values(manifest.exports).map((conditions) => conditions.default), ...Object.values(manifest.bin)].map((path) =>
  path.replace(/^\.\/dist\//, ''),
);
const stem = (path) => path.replace(/\.c?js$/, '');
// The ES entries, and kit/environment, which the jest entry import()s by its path at run time.
const entries = [...named.filter((path) => path.endsWith('.js')).map(stem), 'kit/environment'];
// Jest loads these with require(); they import() the ES entries at run time. Each is transpiled alone, from its .cts.
const commonJsEntries = named.filter((path) => path.endsWith('.cjs')).map((path) => source(`${stem(path)}.cts`));

/** Bundles the server into `dist` (a directory path); returns the files written there, relative to it. */
export async function bundle(dist) {
  const common = { outdir: dist, platform: 'node', target: 'node20.19', sourcemap: true, write: false, logLevel: 'warning' };
  const [esm, cjs] = await Promise.all([
    build({
      ...common,
      entryPoints: Object.fromEntries(entries.map((entry) => [entry, source(`${entry}.ts`)])),
      bundle: true,
      splitting: true,
      format: 'esm',
      packages: 'external',
      chunkNames: 'chunks/[name]-[hash]',
    }),
    build({ ...common, entryPoints: commonJsEntries, format: 'cjs', outExtension: { '.js': '.cjs' } }),
  ]);
  const files = [];
  for (const { path, contents } of [...esm.outputFiles, ...cjs.outputFiles]) {
    mkdirSync(dirname(path), { recursive: true });
    update(path, contents);
    files.push(relative(dist, path));
  }
  files.sort();
  update(join(dist, 'bundle.json'), `${JSON.stringify(files, null, 2)}\n`);
  return files;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundle(join(packageDirectory, 'dist'));
