// What a browser app pays for the SDK: the packed tarball, and the minified + gzipped bundle of
// the three functions a typical sign-in page imports. The test-helpers entry and the device flow helpers are bundled
// too, and the bundles are searched for their paths, to show that an app which does not import them carries none of
// them.
// Run after `npm run build`.
// Usage: node scripts/size.mjs [--json]
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const pkgDir = fileURLToPath(new URL('..', import.meta.url));
if (!existsSync(new URL('../dist/index.js', import.meta.url))) {
  console.error('dist/ is missing: run `npm run build -w @tokenbell/sdk` first');
  process.exit(1);
}

async function browserBundle(contents) {
  const { outputFiles } = await build({
    stdin: { contents, resolveDir: pkgDir, loader: 'js', sourcefile: 'browser-app.js' },
    bundle: true,
    minify: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    logLevel: 'error',
  });
  const bundle = outputFiles[0].contents;
  return {
    minBytes: bundle.byteLength,
    minGzipBytes: gzipSync(bundle, { level: 9 }).byteLength,
    testHelperPaths: new Set(Buffer.from(bundle).toString('utf8').match(/\/api\/v3\/test_helpers\/[\w{}/]*/g)).size,
    // The device flow's own endpoint: only a bundle that imports its helpers has it.
    deviceFlowPaths: (Buffer.from(bundle).toString('utf8').match(/\/oauth\/authorize_device/g) ?? []).length,
  };
}

const main = await browserBundle("export { createTokenbellClient, authorizationUrl, exchangeCode } from '@tokenbell/sdk';");
const testHelpers = await browserBundle("export { createTokenbellTestHelpers } from '@tokenbell/sdk/test-helpers';");
const deviceFlow = await browserBundle("export { startDeviceAuthorization, pollDeviceToken } from '@tokenbell/sdk';");

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const [pack] = JSON.parse(execFileSync(npm, ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: pkgDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));

const figures = {
  packedBytes: pack.size,
  unpackedBytes: pack.unpackedSize,
  files: pack.entryCount,
  ...main,
  testHelpers,
  deviceFlow,
};

if (process.argv.includes('--json')) {
  console.log(JSON.stringify(figures));
} else {
  const kB = (n) => `${(n / 1000).toFixed(2)} kB`;
  console.log(`packed tarball:   ${kB(figures.packedBytes)} (${figures.files} files, ${kB(figures.unpackedBytes)} unpacked)`);
  console.log(`browser bundle:   ${kB(figures.minBytes)} min, ${kB(figures.minGzipBytes)} min+gzip`);
  console.log('                  (createTokenbellClient, authorizationUrl, exchangeCode; esbuild, platform browser)');
  console.log(`                  test-helper paths in it: ${figures.testHelperPaths}`);
  console.log(`test helpers:     ${kB(testHelpers.minBytes)} min, ${kB(testHelpers.minGzipBytes)} min+gzip, ${testHelpers.testHelperPaths} paths`);
  console.log("                  (createTokenbellTestHelpers from '@tokenbell/sdk/test-helpers')");
  console.log(`device flow:      ${kB(deviceFlow.minBytes)} min, ${kB(deviceFlow.minGzipBytes)} min+gzip (startDeviceAuthorization, pollDeviceToken)`);
}
