// The server listens with what serving the API needs and no more: the pages (their sessions, CSRF checks, routers and
// markup) and the API reference (Swagger UI's routes) load at the first request for one of them, the seed's, the
// demo's and the test helpers' modules only for a start that uses them, the PostgreSQL driver only with a
// database, nodemailer only with an SMTP server, express-openapi-validator only with --validate-responses, jose with
// the first id_token, prom-client's runtime collectors with the first scrape, and of rate-limiter-flexible only its
// answer class (the memory backing keeps its own counts).
// Checked on the real CLI, from what its process has loaded; and the test kit's way to a first token likewise loads
// none of what an in-process instance does not use (the request log among them: only the CLI logs requests).
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort, spawnProcess, stopProcess, waitForHttp, type SpawnedProcess } from '../../../../scripts/lib/processes.js';
import { exampleSeedPath } from '../support/server.js';

const probe = fileURLToPath(new URL('./loaded-modules-probe.mjs', import.meta.url));
const cli = fileURLToPath(new URL('../../src/cli/index.ts', import.meta.url));
const src = fileURLToPath(new URL('../../src/', import.meta.url));
/** The small page modules the start does load: error pages, the stylesheet, the pages' headers, and where the pages and the reference are. */
const loadedAtStart = ['pages/html.ts', 'pages/assets.ts', 'pages/reference-paths.ts', 'http/pages/paths.ts', 'http/pages/headers.ts'];
/**
 * Loaded only when used: the drivers, the reference's bundle, the validator (the compiled contract checks requests),
 * jose (the first id_token loads it; the first signing key, made at start, needs only node:crypto), and the runtime's
 * collectors of prom-client with @opentelemetry/api under them (the first scrape loads them).
 */
const notAtStart = ['pg', 'pg-pool', 'node-pg-migrate', 'nodemailer', 'swagger-ui-dist', 'express-openapi-validator', 'jose', '@opentelemetry/api', 'express-session', 'csrf-sync', 'csrf-csrf', 'cookie-parser'];
/** Of the server's own modules, the seed's, the demo's and the test-helper area's (this start has none of them). */
const ownNotAtStart = /^(domain\/seed\/|domain\/testing\/|http\/test-helper|http\/faults|http\/request-journal|http\/session)/;

let server: SpawnedProcess;
let baseUrl = '';
beforeAll(async () => {
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  server = spawnProcess(process.execPath, ['--import', 'tsx', probe, cli, '--memory', '--host', '127.0.0.1', '--port', String(port), '--log-level', 'silent'], {
    env: { TOKENBELL_DEMO: 'off' },
  });
  await waitForHttp('tokenbell', server, `${baseUrl}/-/readiness`);
});
afterAll(() => (server ? stopProcess(server.child) : undefined));

/** Every module the server has loaded so far, by file path (the probe's answer to SIGUSR2). */
async function loaded(): Promise<string[]> {
  const from = server.stderr().length;
  server.child.kill('SIGUSR2');
  for (;;) {
    const line = /loaded modules: (.*)\n/.exec(server.stderr().slice(from));
    if (line) return JSON.parse(line[1]!) as string[];
    await sleep(20);
  }
}

const ofServer = (paths: string[]) => paths.filter((path) => path.startsWith(src)).map((path) => path.slice(src.length));
const pageModules = (paths: string[]) => ofServer(paths).filter((path) => /^(pages|http\/pages)\//.test(path) || path === 'http/reference-ui-routes.ts');
const packages = (paths: string[]) => [...new Set(paths.filter((path) => path.includes('/node_modules/')).map((path) => path.split('/node_modules/').pop()!.split('/')[0]!))];

it('answers with neither the pages, the reference, pg, nodemailer nor the validator loaded, and loads a page when it is asked for', async () => {
  const atStart = await loaded();
  // The probe sees both kinds of module: the server's own (ES modules) and Express (CommonJS).
  expect(ofServer(atStart)).toContain('http/app.ts');
  expect(packages(atStart)).toContain('express');
  expect(packages(atStart).filter((name) => notAtStart.includes(name))).toEqual([]);
  // Of the throttle's library and of prom-client, the parts in use alone: their indexes load everything they have.
  for (const library of ['rate-limiter-flexible', 'prom-client']) {
    expect(atStart.filter((path) => path.includes(`/node_modules/${library}/`)).map((path) => path.split(`/${library}/`)[1]), library).not.toContain('index.js');
  }
  // The first scrape loads the runtime's collectors, and has their metrics.
  expect(await (await fetch(`${baseUrl}/-/metrics`)).text()).toContain('process_cpu_user_seconds_total');
  expect(pageModules(atStart).filter((path) => !loadedAtStart.includes(path))).toEqual([]);
  expect(ofServer(atStart).filter((path) => ownNotAtStart.test(path))).toEqual([]);

  expect((await fetch(`${baseUrl}/users/sign_in`)).status).toBe(200);
  expect((await fetch(`${baseUrl}/help/api`)).status).toBe(200);
  const afterPages = pageModules(await loaded());
  expect(packages(await loaded())).toEqual(expect.arrayContaining(['express-session', 'csrf-sync', 'csrf-csrf']));
  expect(afterPages).toEqual(expect.arrayContaining(['http/pages/stack.ts', 'http/pages/routers.ts', 'http/pages/sign-in-routes.ts', 'pages/sign-in.ts', 'http/reference-ui-routes.ts', 'pages/reference.ts']));
});

it('gets the test kit to its first token without the pages, the request log, the drivers or the validator', async () => {
  const kit = spawnProcess(process.execPath, ['--import', 'tsx', probe, fileURLToPath(new URL('./kit-first-token-probe.ts', import.meta.url)), exampleSeedPath]);
  expect(await kit.exited, kit.output()).toEqual({ code: 0, signal: null });
  const modules = JSON.parse(/loaded modules: (.*)\n/.exec(kit.stderr())![1]!) as string[];
  expect(ofServer(modules)).toContain('testing.ts');
  expect(packages(modules).filter((name) => [...notAtStart, 'pino', 'thread-stream', 'sonic-boom'].includes(name))).toEqual([]);
  expect(ofServer(modules).filter((path) => /^(http\/pages\/stack|http\/session|http\/request-log)/.test(path))).toEqual([]);
});
