// `npm start`: build what changed since the last start, then run the server's CLI in this process.
//
// Plain node, not tsx, and no `npm run build` when nothing changed: each npm run costs 150-300 ms and the builds
// take 15 s even when they have nothing to do, where telling whether they do costs a stat of every file they read
// (a few milliseconds). A workspace is built when a file its build reads differs, in size or modification time,
// from what this script saw when that workspace's last build started (kept in node_modules/.cache, so a fresh
// clone or `npm ci` starts over), or when its output is missing. Comparing with the recorded state, not with the
// outputs' times, means a file restored with an older time still counts as a change, and a build that writes only
// what changed (tsc's incremental mode) is not asked again for files it rightly left alone.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const record = join(root, 'node_modules/.cache/tokenbell/start.json');
// What every build reads: the shared compiler settings, and the installed tools and dependencies.
const common = ['tsconfig.base.json', 'package-lock.json'];
const sdkInputs = ['packages/sdk/src', 'packages/sdk/package.json', 'packages/sdk/tsconfig.json', 'packages/sdk/tsup.config.ts'];
/** In build order; the server compiles against the SDK's types, so a change to the SDK rebuilds both. */
const workspaces = [
  { name: '@tokenbell/sdk', inputs: [...common, ...sdkInputs], outputs: ['packages/sdk/dist/index.js', 'packages/sdk/dist/index.d.ts'] },
  {
    name: '@tokenbell/server',
    inputs: [
      ...common,
      ...sdkInputs,
      'packages/server/src',
      'packages/server/package.json',
      'packages/server/tsconfig.build.json',
      'packages/server/scripts',
      'openapi/openapi.yaml',
      'node_modules/swagger-ui-dist/package.json',
    ],
    outputs: ['packages/server/dist/cli/index.js', 'packages/server/dist/openapi.json'],
  },
];

/** Each file under the inputs (directories walked), as "modification time:size", by its path from the root. */
function snapshot(inputs) {
  const files = {};
  const visit = (path) => {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    else files[relative(root, path)] = `${stat.mtimeMs}:${stat.size}`;
  };
  for (const input of inputs) visit(join(root, input));
  return files;
}

const sameFiles = (a = {}, b = {}) => Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([path, state]) => b[path] === state);

function readRecord() {
  try {
    return JSON.parse(readFileSync(record, 'utf8'));
  } catch {
    return {};
  }
}

/** Builds the workspaces that changed, in order; returns the exit status of a failed build, or 0. */
function buildChanged() {
  const built = readRecord();
  let upstreamBuilt = false;
  for (const { name, inputs, outputs } of workspaces) {
    const now = snapshot(inputs);
    const fresh = !upstreamBuilt && sameFiles(now, built[name]) && outputs.every((output) => existsSync(join(root, output)));
    if (fresh) continue;
    process.stderr.write(`npm start: building ${name}\n`);
    // The builds' own output goes to standard error: standard output carries only the server's log lines.
    const { status, error } = spawnSync('npm', ['run', 'build', '--silent', '--workspace', name], { cwd: root, stdio: ['ignore', 2, 2] });
    if (error) throw error;
    if (status !== 0) return status ?? 1;
    upstreamBuilt = true;
    // What the build started from: a file edited while it ran differs from this and is built at the next start.
    built[name] = now;
    mkdirSync(dirname(record), { recursive: true });
    writeFileSync(record, `${JSON.stringify(built)}\n`);
  }
  return 0;
}

const status = buildChanged();
if (status !== 0) process.exit(status);
// The quick start makes the demo account unless told otherwise (docs/getting-started.md, The first start); `TOKENBELL_DEMO=off npm start`
// starts empty. Set here, as `${TOKENBELL_DEMO:-on}` did, so an empty value counts as unset.
process.env.TOKENBELL_DEMO ||= 'on';
// In this process rather than a child: one Node start fewer. The CLI reads process.argv from its third entry on,
// which is what followed `npm start --`.
await import(pathToFileURL(join(root, 'packages/server/dist/cli/index.js')).href);
