// The server as someone installing it from npm gets it: both tarballs packed from this checkout (prepack builds
// them), their contents, installed into an empty project, `npx tokenbell --version`, the README's "From code"
// example answering the SDK over real HTTP, and `@tokenbell/server/testing` started under plain node; then every
// public entry of both loaded with require() and import and type-checked strictly (skipLibCheck off), and the same
// small suite run four ways, as a user's project would: Jest, vitest, Playwright Test and Python over HTTP.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readFile, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npmPack } from '../../../test/support/npm-pack.js';
import { freePort, spawnProcess, stopProcess, waitForHttp } from '../../../scripts/lib/processes.js';

const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const packagesDir = fileURLToPath(new URL('../..', import.meta.url));
const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
/** The version of a tool this repository has installed, so that the project's install is the same and from the cache. */
const installedVersion = async (name: string) =>
  `${name}@${(JSON.parse(await readFile(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version}`;
/** What a user's project would install next to the two packages to test with them, at this repository's versions. */
const runners = ['typescript', '@types/node', 'vitest', 'jest', '@playwright/test'];
let scratch = '';
const tarballs: Record<'sdk' | 'server', { file: string; paths: string[] }> = { sdk: { file: '', paths: [] }, server: { file: '', paths: [] } };

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'tokenbell-server-pack-'));
  for (const name of ['sdk', 'server'] as const) {
    const pack = await npmPack(join(packagesDir, name), scratch);
    tarballs[name] = { file: pack.file, paths: pack.files.map((f) => f.path).sort() };
  }
}, 180_000);

afterAll(() => (scratch ? rm(scratch, { recursive: true, force: true }) : undefined));

let installed: Promise<string> | undefined;
/**
 * An empty ESM project with both tarballs installed, and the test runners a user's project would have, made once for
 * every case that runs code in it.
 */
function installedProject(): Promise<string> {
  installed ??= (async () => {
    const project = join(scratch, 'project');
    await mkdir(project);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
    const tools = await Promise.all(runners.map(installedVersion));
    await run(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', tarballs.sdk.file, tarballs.server.file, ...tools], { cwd: project });
    return project;
  })();
  return installed;
}

describe('@tokenbell/server package', { timeout: 180_000 }, () => {
  it('packs the built server, its document, README and LICENSE, and nothing else', async () => {
    const { paths } = tarballs.server;
    // The document as served (YAML) and as the server loads it (its JSON conversion, made by the build).
    expect(paths).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'dist/cli/index.js', 'dist/index.js', 'dist/index.d.ts', 'dist/openapi.yaml', 'dist/openapi.json']));
    // Every file the exports map names (the main entry, the kit and its fixtures): one missing fails only at import, in a user's project.
    const { exports } = JSON.parse(await readFile(join(packagesDir, 'server', 'package.json'), 'utf8')) as { exports: Record<string, Record<string, string>> };
    expect(Object.keys(exports)).toEqual(['.', './testing', './vitest', './playwright', './jest', './jest/teardown']);
    expect(paths).toEqual(expect.arrayContaining(Object.values(exports).flatMap((conditions) => Object.values(conditions).map((target) => target.replace(/^\.\//, '')))));
    expect(paths).toEqual(expect.arrayContaining(['dist/testing.js', 'dist/testing.d.ts']));
    // The PostgreSQL schema's migrations, as plain SQL that `tokenbell migrate` runs.
    expect(paths).toContain('migrations/0001_initial.sql');
    expect(paths.filter((p) => !p.startsWith('dist/') && !/^migrations\/\d{4}_[a-z0-9_]+\.sql$/.test(p) && !['LICENSE', 'README.md', 'package.json'].includes(p))).toEqual([]);
    // The API reference page's Swagger UI, with its licence files and without its source maps.
    const referenceUi = ['LICENSE', 'NOTICE', 'oauth2-redirect.html', 'oauth2-redirect.js', 'swagger-ui-bundle.js', 'swagger-ui-bundle.js.LICENSE.txt', 'swagger-ui.css'].map((f) => `dist/reference-ui/${f}`);
    expect(paths.filter((p) => p.startsWith('dist/reference-ui/'))).toEqual(referenceUi);
    expect(paths.filter((p) => p.startsWith('dist/') && !p.startsWith('dist/reference-ui/') && !/\.(c?js|d\.c?ts|c?js\.map|yaml)$/.test(p) && p !== 'dist/openapi.json')).toEqual([]);
    // The code is the bundle (scripts/bundle.mjs): its entries and shared chunks, and none of the modules that an
    // earlier build of the checkout may have left in dist/ (packing prunes them).
    expect(paths.filter((p) => p.endsWith('.js') && !/^dist\/(chunks|reference-ui)\//.test(p))).toEqual(['dist/cli/index.js', 'dist/index.js', 'dist/kit/environment.js', 'dist/playwright.js', 'dist/testing.js', 'dist/vitest.js']);
    expect(paths.filter((p) => p.startsWith('dist/chunks/') && p.endsWith('.js')).length).toBeGreaterThan(0);
    expect(tarballs.sdk.paths).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json']));
  });

  it('ships source maps that carry their sources, so none points at a file the package lacks', async () => {
    const unpacked = join(scratch, 'unpacked');
    await mkdir(unpacked);
    for (const name of ['sdk', 'server'] as const) {
      await mkdir(join(unpacked, name));
      await run('tar', ['-xzf', tarballs[name].file, '-C', join(unpacked, name)]);
      const maps = tarballs[name].paths.filter((p) => p.endsWith('.map'));
      expect(maps.length, name).toBeGreaterThan(0);
      for (const map of maps) {
        const { sources, sourcesContent } = JSON.parse(await readFile(join(unpacked, name, 'package', map), 'utf8')) as { sources: string[]; sourcesContent?: (string | null)[] };
        const missing = sources.filter((_, i) => typeof sourcesContent?.[i] !== 'string');
        expect(missing, `${name}: ${map}`).toEqual([]);
      }
    }
  });

  it('installs from the tarballs, answers --version, and serves the SDK as its README shows', async () => {
    const project = await installedProject();
    const { stdout: version } = await run(npm, ['exec', '--no', '--', 'tokenbell', '--version'], { cwd: project });
    const { version: expected } = JSON.parse(await readFile(join(packagesDir, 'server', 'package.json'), 'utf8')) as { version: string };
    expect(version.trim()).toBe(expected);
    expect(await readdir(join(project, 'node_modules', '@tokenbell', 'server', 'dist'))).toContain('openapi.yaml');

    await writeFile(
      join(project, 'round-trip.mjs'),
      `import { configFrom, createApp, openBackend, loadSeed } from '@tokenbell/server';
import { createTokenbellClient, passwordGrant } from '@tokenbell/sdk';

const config = configFrom(['--memory']);
const backend = await openBackend(config);
await loadSeed(backend.storage, { users: [{ username: 'jsmith', email: 'jsmith@example.com', name: 'J. Smith', password: 'a long password' }] });
const app = createApp({ backend, config });
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const baseUrl = 'http://127.0.0.1:' + server.address().port;
try {
  const tokens = await passwordGrant({ baseUrl, username: 'jsmith', password: 'a long password' });
  const client = createTokenbellClient({ baseUrl, auth: { accessToken: tokens.access_token } });
  const user = await client.user.current();
  const settings = await client.notificationSettings.global.update({ level: 'watch' });
  const reference = await fetch(baseUrl + '/assets/reference/swagger-ui.css');
  const css = await reference.text();
  console.log(JSON.stringify({ username: user.username, level: settings.level, reference: reference.status, sourceMapped: css.includes('sourceMappingURL') }));
} finally {
  server.close();
  await backend.storage.maintenance.close();
}
`,
    );
    const { stdout } = await run(process.execPath, ['round-trip.mjs'], { cwd: project });
    expect(JSON.parse(stdout)).toEqual({ username: 'jsmith', level: 'watch', reference: 200, sourceMapped: false });
  });

  it('starts @tokenbell/server/testing under plain node, seeded, and lets the process end once closed', async () => {
    const project = await installedProject();
    await writeFile(
      join(project, 'testing.mjs'),
      `import { startTokenbell } from '@tokenbell/server/testing';

const tokenbell = await startTokenbell({
  seed: {
    users: [{ username: 'alice', email: 'alice@example.com', name: 'Alice', password: 'alice-password' }],
    applications: [{ name: 'My App', owner: 'alice', client_id: 'my-app', client_secret: 'my-app-secret-0123456789', redirect_uris: ['http://127.0.0.1:3000/callback'] }],
  },
});
try {
  const { access_token } = await tokenbell.helpers.mintAccessToken({ username: 'alice', client_id: 'my-app' });
  const response = await fetch(tokenbell.url + '/api/v4/user', { headers: { authorization: 'Bearer ' + access_token } });
  console.log(JSON.stringify({ status: response.status, username: (await response.json()).username }));
} finally {
  await tokenbell.close();
}
`,
    );
    // No process.exit in the script: it ends only if close() lets go of every handle, so a leak shows as the timeout.
    // execFile rejects on any exit code but 0, and on the timeout.
    const { stdout } = await run(process.execPath, ['testing.mjs'], { cwd: project, timeout: 60_000 });
    expect(JSON.parse(stdout)).toEqual({ status: 200, username: 'alice' });
  });
});

describe('the kit from an installed package', { timeout: 180_000 }, () => {
  // The suites, configurations and seed that a user's project would have (four-ways/README.md), copied in once.
  let copied: Promise<string> | undefined;
  const project = () =>
    (copied ??= (async () => {
      const dir = await installedProject();
      await cp(fileURLToPath(new URL('four-ways', import.meta.url)), dir, { recursive: true });
      return dir;
    })());
  // Without this run's own vitest and tokenbell variables (TOKENBELL_SEED would be the fixtures' seed), as in a
  // user's shell; CI as on a build machine.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(VITEST|TOKENBELL_)/.test(name)));
  const exec = (file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) =>
    run(file, args, { cwd, timeout: 120_000, env: { ...inherited, NO_COLOR: '1', FORCE_COLOR: '0', CI: 'true', ...env } });
  const bin = (cwd: string, name: string) => join(cwd, 'node_modules', '.bin', name);

  it('loads every public entry of both packages with require() and with import, none of them waiting at the top level', async () => {
    const dir = await project();
    const entries = ['@tokenbell/server', '@tokenbell/server/testing', '@tokenbell/server/vitest', '@tokenbell/server/playwright', '@tokenbell/server/jest', '@tokenbell/server/jest/teardown', '@tokenbell/sdk', '@tokenbell/sdk/test-helpers'];
    // A top-level await anywhere in an entry's graph fails require() with ERR_REQUIRE_ASYNC_MODULE.
    const required = JSON.parse((await exec(process.execPath, ['load/load.cjs'], dir)).stdout) as Record<string, string[]>;
    const imported = JSON.parse((await exec(process.execPath, ['load/load.mjs'], dir)).stdout) as Record<string, string[]>;
    expect(Object.keys(required)).toEqual(entries);
    expect(Object.keys(imported)).toEqual(entries);
    expect(required['@tokenbell/server/testing']).toEqual(['startTokenbell']);
    expect(imported['@tokenbell/server/testing']).toEqual(['startTokenbell']);
    expect(required['@tokenbell/server/jest']).toEqual(['(function)', 'teardown']);
    expect(required['@tokenbell/server/vitest']).toEqual(expect.arrayContaining(['default', 'tokenbellGlobalSetup']));
    expect(imported['@tokenbell/server/playwright']).toEqual(['expect', 'test']);
    expect(required['@tokenbell/sdk/test-helpers']).toEqual(['createTokenbellTestHelpers', 'signIn']);
  });

  it('type-checks the suites and every public entry strictly, declarations included (skipLibCheck off), as ESM and CommonJS', async () => {
    const dir = await project();
    // tsconfig.json: strict, module nodenext, skipLibCheck false; types/ imports every entry from .ts, .mts and .cts.
    const check = await exec(bin(dir, 'tsc'), ['-p', '.'], dir).then(() => '', (error: { stdout?: string }) => error.stdout ?? String(error));
    expect(check).toBe('');
  });

  it('runs the suite with Jest (CommonJS) and the Jest global setup', async () => {
    const dir = await project();
    await exec(bin(dir, 'tsc'), ['-p', 'jest'], dir);
    const { stderr } = await exec(bin(dir, 'jest'), ['--ci'], dir);
    expect(stderr).toMatch(/Tests:\s+2 passed, 2 total/);
    // The plain JavaScript suite, which requires the SDK's main entry too, is the test-kit guide's Jest example.
    const guide = await readFile(fileURLToPath(new URL('../../../docs/test-kit.md', import.meta.url)), 'utf8');
    const plain = await readFile(fileURLToPath(new URL('four-ways/jest/plain/tokenbell.test.js', import.meta.url)), 'utf8');
    expect(guide).toContain(`\`\`\`js\n${plain}\`\`\``);
  });

  it('runs the suite with vitest and the one-line globalSetup', async () => {
    const dir = await project();
    const { stdout } = await exec(bin(dir, 'vitest'), ['run'], dir);
    expect(stdout).toMatch(/Tests\s+1 passed \(1\)/);
  });

  it('runs the suite with Playwright Test and the tokenbell fixture', async () => {
    const dir = await project();
    const { stdout } = await exec(bin(dir, 'playwright'), ['test'], dir);
    expect(stdout).toMatch(/1 passed/);
  });

  it('runs the suite in Python over HTTP against the packed tokenbell started with --test-helpers, with the token it printed', async (context) => {
    const python = '/usr/bin/python3';
    if (!existsSync(python)) {
      if (process.env.CI === 'true') throw new Error(`the Python way needs ${python}; install it (apt-get install python3)`);
      return context.skip(`no ${python}; under CI=true this fails instead`);
    }
    const dir = await project();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const server = spawnProcess(
      process.execPath,
      [join(dir, 'node_modules/@tokenbell/server/dist/cli/index.js'), '--memory', '--test-helpers', '--seed', 'tokenbell.seed.json', '--host', '127.0.0.1', '--port', String(port), '--log-level', 'warn'],
      { cwd: dir, env: { NO_COLOR: '1' }, outputLimit: 20_000 },
    );
    try {
      await waitForHttp(`packed tokenbell :${port}`, server, `${url}/-/health`, { timeoutMs: 30_000, attemptTimeoutMs: 2_000 });
      // The administrator's token the server printed at start (standard error, once): all a suite in another language
      // needs, with no token written into a seed.
      // It is written once the server listens, so health may answer a moment before it.
      await expect.poll(() => /^ {2}(tbpat-\S+)$/m.exec(server.stderr())?.[1], { timeout: 10_000 }).toBeDefined();
      const token = /^ {2}(tbpat-\S+)$/m.exec(server.stderr())![1]!;
      const result = await exec(python, ['-m', 'unittest', '-v', 'test_four_ways'], join(dir, 'python'), { TOKENBELL_URL: url, TOKENBELL_TEST_HELPERS_TOKEN: token }).catch(
        (error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: `${error.stderr ?? String(error)}\nserver:\n${server.output()}` }),
      );
      expect(result.stderr).toMatch(/Ran 1 test[\s\S]*\nOK\s*$/);
    } finally {
      await stopProcess(server.child);
    }
  });
});
