// The server as someone installing it from npm gets it: both tarballs packed from this checkout (prepack builds
// them), their contents, installed into an empty project, `npx tokenbell --version`, the README's "From code"
// example answering the SDK over real HTTP, and `@tokenbell/server/testing` started under plain node.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npmPack } from '../../../test/support/npm-pack.js';

const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const packagesDir = fileURLToPath(new URL('../..', import.meta.url));
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
/** An empty ESM project with both tarballs installed, made once for every case that runs code in it. */
function installedProject(): Promise<string> {
  installed ??= (async () => {
    const project = join(scratch, 'project');
    await mkdir(project);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
    await run(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', tarballs.sdk.file, tarballs.server.file], { cwd: project });
    return project;
  })();
  return installed;
}

describe('@tokenbell/server package', { timeout: 180_000 }, () => {
  it('packs the built server, its document, README and LICENSE, and nothing else', async () => {
    const { paths } = tarballs.server;
    // The document as served (YAML) and as the server loads it (its JSON conversion, made by the build).
    expect(paths).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'dist/cli/index.js', 'dist/index.js', 'dist/index.d.ts', 'dist/openapi.yaml', 'dist/openapi.json']));
    // Every file the exports map names (`.` and `./testing`): one missing fails only at import, in a user's project.
    const { exports } = JSON.parse(await readFile(join(packagesDir, 'server', 'package.json'), 'utf8')) as { exports: Record<string, Record<string, string>> };
    expect(Object.keys(exports)).toEqual(['.', './testing']);
    expect(paths).toEqual(expect.arrayContaining(Object.values(exports).flatMap((conditions) => Object.values(conditions).map((target) => target.replace(/^\.\//, '')))));
    expect(paths).toEqual(expect.arrayContaining(['dist/testing.js', 'dist/testing.d.ts']));
    // The PostgreSQL schema's migrations, as plain SQL that `tokenbell migrate` runs.
    expect(paths).toContain('migrations/0001_initial.sql');
    expect(paths.filter((p) => !p.startsWith('dist/') && !/^migrations\/\d{4}_[a-z0-9_]+\.sql$/.test(p) && !['LICENSE', 'README.md', 'package.json'].includes(p))).toEqual([]);
    // The API reference page's Swagger UI, with its licence files and without its source maps.
    const referenceUi = ['LICENSE', 'NOTICE', 'swagger-ui-bundle.js', 'swagger-ui-bundle.js.LICENSE.txt', 'swagger-ui.css'].map((f) => `dist/reference-ui/${f}`);
    expect(paths.filter((p) => p.startsWith('dist/reference-ui/'))).toEqual(referenceUi);
    expect(paths.filter((p) => p.startsWith('dist/') && !p.startsWith('dist/reference-ui/') && !/\.(js|d\.ts|js\.map|yaml)$/.test(p) && p !== 'dist/openapi.json')).toEqual([]);
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
