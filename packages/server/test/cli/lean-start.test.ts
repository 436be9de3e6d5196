// The server listens with what serving the API needs and no more: the pages and the API reference (their routers,
// markup and Swagger UI's routes) load at the first request for one of them, the PostgreSQL driver only with a
// database, nodemailer only with an SMTP server, express-openapi-validator only with --validate-responses, jose with
// the first id_token, prom-client's runtime collectors with the first scrape, and of rate-limiter-flexible only its
// answer class (the memory backing keeps its own counts).
// Checked on the real CLI, from what its process has loaded.
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort, spawnProcess, stopProcess, waitForHttp, type SpawnedProcess } from '../../../../scripts/lib/processes.js';

const probe = fileURLToPath(new URL('./loaded-modules-probe.mjs', import.meta.url));
const cli = fileURLToPath(new URL('../../src/cli/index.ts', import.meta.url));
const src = fileURLToPath(new URL('../../src/', import.meta.url));
/** The small page modules the start does load: error pages, the stylesheet, and where the pages and the reference are. */
const loadedAtStart = ['pages/html.ts', 'pages/assets.ts', 'pages/reference-paths.ts', 'http/pages/shared.ts', 'http/pages/resume-paths.ts'];
/**
 * Loaded only when used: the drivers, the reference's bundle, the validator (the compiled contract checks requests),
 * jose (the first id_token loads it; the first signing key, made at start, needs only node:crypto), and the runtime's
 * collectors of prom-client with @opentelemetry/api under them (the first scrape loads them).
 */
const notAtStart = ['pg', 'pg-pool', 'node-pg-migrate', 'nodemailer', 'swagger-ui-dist', 'express-openapi-validator', 'jose', '@opentelemetry/api'];

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

  expect((await fetch(`${baseUrl}/users/sign_in`)).status).toBe(200);
  expect((await fetch(`${baseUrl}/help/api`)).status).toBe(200);
  const afterPages = pageModules(await loaded());
  expect(afterPages).toEqual(expect.arrayContaining(['http/pages/routers.ts', 'http/pages/sign-in-routes.ts', 'pages/sign-in.ts', 'http/reference-ui-routes.ts', 'pages/reference.ts']));
});
