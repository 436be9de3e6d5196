import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npmPack, type PackResult } from '../../../test/support/npm-pack.js';

// Checks the package as a consumer gets it: the tarball's contents, installing it, importing it from
// ESM and CommonJS, and the exports map as publint and arethetypeswrong see it.
const run = promisify(execFile);
const pkgDir = fileURLToPath(new URL('..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const bin = (name: string) => join(pkgDir, '..', '..', 'node_modules', '.bin', name);
const scratch = mkdtempSync(join(tmpdir(), 'tokenbell-sdk-pack-'));
let tarball = '';


beforeAll(async () => {
  tarball = (await npmPack(pkgDir, scratch)).file;
}, 120_000);

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe('@tokenbell/sdk package', { timeout: 120_000 }, () => {
  it('packs dist, README, LICENSE and package.json only', async () => {
    const { stdout } = await run(npm, ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: pkgDir });
    const [pack] = JSON.parse(stdout) as PackResult[];
    const paths = pack!.files.map((f) => f.path).sort();
    expect(paths).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'README.md',
        'package.json',
        ...['index', 'test-helpers'].flatMap((entry) => ['.js', '.cjs', '.d.ts', '.d.cts'].map((ext) => `dist/${entry}${ext}`)),
      ]),
    );
    expect(paths.filter((p) => !/^dist\/[^/]+$/.test(p) && !['LICENSE', 'README.md', 'package.json'].includes(p))).toEqual([]);
  });

  it('installs from the tarball and works from ESM and CommonJS', async () => {
    writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true }));
    await run(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', tarball], { cwd: scratch });

    const body = (format: 'esm' | 'cjs') => `
      const fetch = async (request) => new Response(JSON.stringify({ url: request.url, auth: request.headers.get('authorization') }));
      const main = async () => {
        const { url, state, codeVerifier } = await sdk.authorizationUrl({ baseUrl: 'http://127.0.0.1:4010', clientId: 'app', redirectUri: 'http://localhost/cb' });
        const client = sdk.createTokenbellClient({ baseUrl: 'http://127.0.0.1:4010', auth: { accessToken: 't' }, fetch });
        const answer = await client.notificationSettings.project('acme/widgets').get();
        const helpers = testHelpers.createTokenbellTestHelpers({ baseUrl: 'http://127.0.0.1:4010', token: 'p', fetch: async () => new Response('{"message":"400 Bad request - seconds must be at least 1"}', { status: 400 }) });
        const refused = await helpers.advanceClock(0).catch((error) => ({ sameClass: error instanceof sdk.TokenbellValidationError, message: error.message }));
        console.log(JSON.stringify({ format: '${format}', url, state, codeVerifier, answer, refused, networkError: typeof sdk.TokenbellNetworkError }));
      };
      main().catch((error) => { console.error(error); process.exit(1); });`;
    writeFileSync(join(scratch, 'check.mjs'), `import * as sdk from '@tokenbell/sdk';\nimport * as testHelpers from '@tokenbell/sdk/test-helpers';\n${body('esm')}`);
    writeFileSync(join(scratch, 'check.cjs'), `const sdk = require('@tokenbell/sdk');\nconst testHelpers = require('@tokenbell/sdk/test-helpers');\n${body('cjs')}`);

    for (const [file, format] of [
      ['check.mjs', 'esm'],
      ['check.cjs', 'cjs'],
    ] as const) {
      const { stdout } = await run(process.execPath, [file], { cwd: scratch });
      const out = JSON.parse(stdout) as Record<string, unknown> & { url: string; state: string; codeVerifier: string };
      expect(out).toMatchObject({
        format,
        answer: { url: 'http://127.0.0.1:4010/api/v3/projects/acme%2Fwidgets/notification_settings', auth: 'Bearer t' },
        // One error class for both entries: the build puts shared modules in chunks, in CommonJS too.
        refused: { sameClass: true, message: '400 Bad request - seconds must be at least 1' },
        networkError: 'function',
      });
      expect(out.url).toMatch(/^http:\/\/127\.0\.0\.1:4010\/oauth\/authorize\?client_id=app&.*code_challenge_method=S256$/);
      expect(out.state).toHaveLength(43);
      expect(out.codeVerifier).toHaveLength(43);
    }
  });

  it('passes publint', async () => {
    const { publint } = await import('publint');
    const { messages } = await publint({ pkgDir, level: 'suggestion' });
    expect(messages).toEqual([]);
  });

  it('passes arethetypeswrong for every resolution mode', async () => {
    // The default (strict) profile covers node10, node16 from CJS and from ESM, and bundler.
    const result = await run(bin('attw'), [tarball, '--format', 'json'], { cwd: pkgDir }).catch((error: { stdout: string }) => error);
    const report = JSON.parse(result.stdout) as { analysis: { problems: unknown[] } };
    expect(report.analysis.problems).toEqual([]);
  });

  it('reports its size for a browser bundle, which carries no test helpers', async () => {
    const { stdout } = await run(process.execPath, [join(pkgDir, 'scripts', 'size.mjs'), '--json'], { cwd: pkgDir });
    type Bundle = { minBytes: number; minGzipBytes: number; testHelperPaths: number; deviceFlowPaths: number };
    const figures = JSON.parse(stdout) as Bundle & { packedBytes: number; testHelpers: Bundle; deviceFlow: Bundle };
    // The same bundle while the main client still had the test helpers in it (esbuild 0.27, before issue 19).
    const withTestHelpers = { minBytes: 12_944, minGzipBytes: 4_771 };
    console.info(
      `@tokenbell/sdk: packed ${figures.packedBytes} B; browser bundle ${figures.minBytes} B min, ${figures.minGzipBytes} B min+gzip ` +
        `(${withTestHelpers.minBytes} B and ${withTestHelpers.minGzipBytes} B with the test helpers in the main client); ` +
        `test-helpers entry ${figures.testHelpers.minBytes} B min, ${figures.testHelpers.minGzipBytes} B min+gzip`,
    );
    // A budget, so that growth is a decision rather than an accident.
    expect(figures.minGzipBytes).toBeLessThan(8_000);
    // The test-helpers entry costs an app that does not import it nothing: none of its paths.
    expect(figures.testHelperPaths).toBe(0);
    // The main client's own budget: 185 B over the figure with the test helpers in it since a network failure names
    // its reason and an error prints only what it has (issue 33), and 731 B more for issue 40's nine methods (the
    // instance's version and metadata, the token in hand, users, the lists and the member look-ups).
    expect(figures.minBytes).toBeLessThanOrEqual(withTestHelpers.minBytes + 200 + 750);
    // ...while the search does find them where they are (one path per operation, some shared by two).
    expect(figures.testHelpers.testHelperPaths).toBe(16);
    // The device flow helpers are a module of their own: a sign-in page's bundle has none of them, theirs has them.
    expect(figures.deviceFlowPaths).toBe(0);
    expect(figures.deviceFlow.deviceFlowPaths).toBe(1);
  });
});
