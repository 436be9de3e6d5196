// `npm start` (scripts/start.mjs) builds only what changed, and a build leaves a running server's dist/ in place.
// Run in a copy of the checkout's sources in a temporary directory, with its own node_modules made of links to this
// one's, so the checkout's own dist/ is never touched. When the checkout's last `npm start` built these very sources,
// the copy starts from that build (dist/ and the record of what it was built from, times kept), and no case waits for
// the whole of both builds.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/lib/paths.js';
import { freePort, waitForHttp } from '../../scripts/lib/processes.js';

const run = promisify(execFile);
const sources = [
  'package.json',
  'package-lock.json',
  'tsconfig.base.json',
  'scripts/start.mjs',
  'openapi/openapi.yaml',
  'packages/sdk/package.json',
  'packages/sdk/tsconfig.json',
  'packages/sdk/tsup.config.ts',
  'packages/sdk/src',
  'packages/server/package.json',
  'packages/server/tsconfig.build.json',
  'packages/server/scripts',
  'packages/server/src',
];
const lastBuild = ['packages/sdk/dist', 'packages/server/dist', 'node_modules/.cache/tokenbell/start.json'];

let copy = '';
let server: ChildProcess | undefined;

beforeAll(async () => {
  copy = await mkdtemp(join(tmpdir(), 'tokenbell-start-'));
  const exists = (path: string) => stat(join(repoRoot, path)).then(() => true, () => false);
  // cp -a keeps modification times to the nanosecond, as the record has them (fs.cp rounds them through seconds).
  const copyOver = async (path: string) => {
    await mkdir(dirname(join(copy, path)), { recursive: true });
    await run('cp', ['-a', join(repoRoot, path), join(copy, path)]);
  };
  for (const path of sources) await copyOver(path);
  for (const path of lastBuild) if (await exists(path)) await copyOver(path);
  // The installed packages, but the workspaces' links point into the copy.
  await mkdir(join(copy, 'node_modules/@tokenbell'), { recursive: true });
  for (const name of await readdir(join(repoRoot, 'node_modules'))) {
    if (name !== '@tokenbell' && name !== '.cache') await symlink(join(repoRoot, 'node_modules', name), join(copy, 'node_modules', name));
  }
  for (const name of ['sdk', 'server']) await symlink(join(copy, 'packages', name), join(copy, 'node_modules/@tokenbell', name));
  await symlink(join(repoRoot, 'packages/server/node_modules'), join(copy, 'packages/server/node_modules'));
}, 60_000);

afterAll(async () => {
  if (server?.exitCode === null) {
    const exited = new Promise((resolve) => server!.once('exit', resolve));
    process.kill(-server.pid!, 'SIGTERM');
    await exited;
  }
  if (copy) await rm(copy, { recursive: true, force: true });
});

const npmStart = (args: string[]) => run('npm', ['start', '--silent', '--', ...args], { cwd: copy, timeout: 120_000, env: { ...process.env, TOKENBELL_DEMO: 'off' } });

/** Every file of both dist/ folders: its inode (a file deleted and written again has a new one), time and content. */
async function distFiles(): Promise<Map<string, { ino: number; mtimeMs: number; digest: string }>> {
  const files = new Map<string, { ino: number; mtimeMs: number; digest: string }>();
  for (const dist of ['packages/sdk/dist', 'packages/server/dist']) {
    for (const entry of await readdir(join(copy, dist), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      const { ino, mtimeMs } = await stat(path);
      const digest = createHash('sha256').update(await readFile(path)).digest('hex');
      files.set(relative(copy, path), { ino, mtimeMs, digest });
    }
  }
  return files;
}

it('builds nothing when nothing changed, picks up a changed source and document, and leaves a running server its files', async () => {
  // Built once (or from the checkout's last build), so that the next start has nothing to do.
  await npmStart(['--version']);
  const built = await distFiles();

  const port = await freePort();
  // Its own process group: npm starts a shell that starts node, and all of them stop with the test.
  server = spawn('npm', ['start', '--', '--memory', '--host', '127.0.0.1', '--port', String(port), '--log-level', 'silent'], {
    cwd: copy,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TOKENBELL_DEMO: 'off' },
  });
  let output = '';
  server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await waitForHttp('npm start', { child: server, output: () => output }, `http://127.0.0.1:${port}/-/readiness`, { timeoutMs: 60_000 });
  expect(output).not.toMatch(/building/);
  expect(await distFiles()).toEqual(built);

  // A one-line change to a server source, and one to the document.
  await writeFile(join(copy, 'packages/server/src/version.ts'), "export const version = 'changed by the test';\n");
  const document = join(copy, 'openapi/openapi.yaml');
  await writeFile(document, (await readFile(document, 'utf8')).replace(/^( {2}summary: ).*$/m, '$1Changed by the test.'));
  const { stdout, stderr } = await npmStart(['--version']);
  expect(stdout.trim()).toBe('changed by the test');
  expect(stderr).toMatch(/building @tokenbell\/server/);
  expect(stderr).not.toMatch(/building @tokenbell\/sdk/);
  expect(JSON.parse(await readFile(join(copy, 'packages/server/dist/openapi.json'), 'utf8'))).toMatchObject({ info: { summary: 'Changed by the test.' } });

  // Nothing the running server may still read went away or changed under it: every file is where it was, a file the
  // build had nothing new for is the very same file, and one it changed was replaced whole (a new file renamed over
  // it), never rewritten in place. The declarations and tsc's record are for the compiler, which rewrites them. The
  // server, started before the build, loads its pages' chunks only now.
  const rebuilt = await distFiles();
  for (const [path, before] of built) {
    const after = rebuilt.get(path);
    expect(after, path).toBeDefined();
    if (after!.digest === before.digest) expect(after!.ino, path).toBe(before.ino);
    else if (!/\.(d\.c?ts|tsbuildinfo)$/.test(path)) expect(after!.ino, `${path} replaced whole`).not.toBe(before.ino);
  }
  expect((await fetch(`http://127.0.0.1:${port}/users/sign_in`)).status).toBe(200);
}, 240_000);
