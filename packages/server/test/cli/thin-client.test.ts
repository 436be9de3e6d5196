// `tokenbell test-helpers ...` is a thin client over HTTP, cheap enough for a shell loop: it loads none of the
// server (Express, the validator, the logger, the metrics, the drivers), only the document's list of operations.
// Nor does `tokenbell --version`, answered before the server's modules load.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTokenbell, type RunningTokenbell } from '../../src/testing.js';

const run = promisify(execFile);
const probe = fileURLToPath(new URL('./loaded-modules-probe.mjs', import.meta.url));
const cli = fileURLToPath(new URL('../../src/cli/index.ts', import.meta.url));
const server = ['express', 'express-openapi-validator', 'pg', 'pino', 'prom-client', 'nodemailer', 'ajv', 'helmet', 'express-session'];

let tb: RunningTokenbell;
beforeAll(async () => {
  tb = await startTokenbell();
});
afterAll(() => tb.close());

async function loadedBy(args: string[]): Promise<{ stdout: string; loaded: string[] }> {
  const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', probe, cli, ...args], { timeout: 30_000 });
  const paths = JSON.parse(/loaded modules: (.*)$/m.exec(stderr)![1]!) as string[];
  return { stdout, loaded: [...new Set(paths.filter((path) => path.includes('/node_modules/')).map((path) => path.split('/node_modules/').pop()!.split('/')[0]!))] };
}

it('loads none of the server for --help or for a call', async () => {
  const help = await loadedBy(['test-helpers', '--help']);
  expect(help.stdout).toMatch(/advance-clock/);
  expect(help.loaded.filter((name) => server.includes(name))).toEqual([]);

  const call = await loadedBy(['test-helpers', 'advance-clock', '{"seconds": 60}', '--url', tb.url, '--token', tb.adminToken]);
  expect(JSON.parse(call.stdout)).toMatchObject({ offset_seconds: 60 });
  expect(call.loaded.filter((name) => server.includes(name))).toEqual([]);
});

it('loads none of the server for tokenbell --version', async () => {
  const version = await loadedBy(['--version']);
  expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  expect(version.loaded.filter((name) => server.includes(name))).toEqual([]);
});
