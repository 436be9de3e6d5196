// What a production start writes, and where (issue 32, items 6, 7 and 11). Standard output is the log stream, read
// by a shipper: nothing but log lines in the chosen format, from the seed to the shutdown, and a failure's line
// carries the request id its client saw. No account and no secret on a first start unless the demo is asked for, and
// then its credentials go to standard error. The test-helper area does not start where other machines reach it.
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { readDurableData } from '../../src/store/file/store.js';
import { freshMigratedDatabase } from '../../../../test/support/postgres.js';
import { exampleSeed, freePort, runCli, startCli, stopCli, tempDir, type CliProcess } from './support.js';
import { join } from 'node:path';
import { exampleAccounts, exampleApplication } from '../support/example-seed.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

const started: CliProcess[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((cli) => stopCli(cli, 'SIGKILL')));
});
const start = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
  const cli = await startCli(args, 20_000, [], env);
  started.push(cli);
  return cli;
};

/** Standard output as a shipper reads it: every line must be one JSON object. */
const logLines = (cli: CliProcess): Array<Record<string, unknown>> =>
  cli
    .stdout()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON log line on standard output: ${line}`);
      }
    });

const messages = (cli: CliProcess) => logLines(cli).map((line) => String(line.msg));

/** Waits until the log has a line whose message matches (pino writes asynchronously). */
async function untilLogged(cli: CliProcess, pattern: RegExp): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!pattern.test(cli.stdout())) {
    if (Date.now() > deadline) throw new Error(`no log line matching ${pattern}:\n${cli.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const readiness = async (cli: CliProcess) => (await fetch(`${cli.baseUrl}/-/readiness`)).json() as Promise<Record<string, unknown>>;

async function countUsers(url: string): Promise<number> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return Number((await client.query<{ count: string }>('SELECT count(*) AS count FROM users')).rows[0]!.count);
  } finally {
    await client.end();
  }
}

const secretShapes = /tbcs_|client_secret|as demo \//;

describe('a first start on an empty store', () => {
  it('makes no account and prints no secret on the data file without a terminal; its output is log lines to the end', async () => {
    const file = join(dir.path, 'empty.json');
    const cli = await start(['--data', file]);
    expect(await readiness(cli)).toMatchObject({ status: 'ok' });
    expect((await readDurableData(file)).users).toEqual([]);
    await stopCli(cli);
    expect((await cli.exited).code).toBe(0);
    expect(messages(cli)).toEqual([expect.stringMatching(/^tokenbell listening on http:\/\/127\.0\.0\.1:\d+ \(data: .*empty\.json; mail: to the log/), 'request completed', 'SIGTERM: shutting down', 'stopped']);
    expect(cli.stderr()).toBe('');
  });

  it('makes no account on a database even when asked nothing, and the demo only when asked, with its credentials on standard error', async () => {
    const database = await freshMigratedDatabase(inject('postgresUrl'));
    try {
      const plain = await start(['--database-url', database.url]);
      expect(await countUsers(database.url)).toBe(0);
      await stopCli(plain);

      const asked = await start(['--database-url', database.url], { TOKENBELL_DEMO: 'on' });
      expect(await countUsers(database.url)).toBe(1);
      expect(asked.stderr()).toMatch(/as demo \/ \S{16}\n[\s\S]*client_secret: {2}tbcs_\S+/);
      expect(asked.stdout()).not.toMatch(secretShapes);
      expect(messages(asked)).toContain('created the demo account, group, project and application (their credentials went to standard error, once)');
      await stopCli(asked);
    } finally {
      await Promise.all(started.splice(0).map((cli) => stopCli(cli, 'SIGKILL')));
      await database.drop();
    }
  });

  it('makes the demo on the data file with --demo, its credentials on standard error only', async () => {
    const file = join(dir.path, 'demo.json');
    const cli = await start(['--data', file, '--demo']);
    expect((await readDurableData(file)).users.map((user) => user.username)).toEqual(['demo']);
    expect(cli.stderr()).toMatch(/^Created a demo account, group, project and application \(shown only this once\):\n {2}sign in: .* as demo \/ \S{16}\n/);
    expect(cli.stdout()).not.toMatch(secretShapes);
    logLines(cli);
  });
});

describe('the log', () => {
  it('carries the seed, the test helpers and the listening line as log lines, with level names and ISO times in json-iso', async () => {
    const cli = await start(['--memory', '--seed', exampleSeed, '--test-helpers', '--log-format', 'json-iso']);
    expect(await readiness(cli)).toMatchObject({ status: 'ok', test_helpers: true });
    const lines = logLines(cli);
    expect(lines.map((line) => [line.level, String(line.msg).slice(0, 24)])).toEqual([
      ['info', `loaded seed ${exampleSeed}`.slice(0, 24)],
      ['warn', expect.any(String)],
      ['info', 'test helpers: made the a'],
      ['info', 'tokenbell listening on h'],
    ]);
    expect(lines[1]).toMatchObject({ testHelpers: true });
    for (const line of lines) expect(line.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // The area's administrator token is a secret: on standard error, once, never in the log.
    const token = /^ {2}(tbpat-\S+)$/m.exec(cli.stderr())?.[1];
    expect(token).toBeDefined();
    expect(cli.stdout()).not.toContain(token);
  });

  it("hashes a seed's passwords with the kit's cheap parameters in memory only, and its users sign in either way", async () => {
    for (const [args, hashing] of [[['--memory'], 'cheap'], [['--data', join(dir.path, 'seeded.json')], 'production']] as const) {
      const cli = await start([...args, '--seed', exampleSeed]);
      await readiness(cli);
      expect(logLines(cli)[0]).toMatchObject({ seed: exampleSeed, passwordHashing: hashing });
      const { username, password } = exampleAccounts.jsmith;
      const response = await fetch(`${cli.baseUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'password', username, password, client_id: exampleApplication.clientId, client_secret: exampleApplication.clientSecret }),
      });
      expect(response.status, args.join(' ')).toBe(200);
      await stopCli(cli);
    }
  });

  it('keeps the life-cycle lines at --log-level warn, which leaves out the requests that went well', async () => {
    const cli = await start(['--memory', '--log-level', 'warn']);
    await readiness(cli);
    await stopCli(cli);
    expect(messages(cli)).toEqual([expect.stringMatching(/^tokenbell listening on /), 'SIGTERM: shutting down', 'stopped']);
  });

  it('is readable lines with --log-format pretty', async () => {
    const cli = await start(['--memory', '--log-format', 'pretty']);
    expect(cli.stdout()).toMatch(/INFO.*tokenbell listening on http:\/\/127\.0\.0\.1/);
    expect(() => JSON.parse(cli.stdout().split('\n')[0]!)).toThrow();
  });

  it("logs a failure of the server's own with its stack and the request id the client saw", async () => {
    const database = await freshMigratedDatabase(inject('postgresUrl'));
    try {
      const cli = await start(['--database-url', database.url, '--seed', exampleSeed]);
      // A schema the server does not expect: not an outage (a 503) but a fault of its own.
      const admin = new pg.Client(database.url);
      await admin.connect();
      await admin.query('ALTER TABLE users RENAME TO users_elsewhere');
      await admin.end();
      const response = await fetch(`${cli.baseUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-request-id': 'support-ticket-4711' },
        body: new URLSearchParams({ grant_type: 'password', username: 'jsmith', password: 'whatever it is' }),
      });
      expect(response.status).toBe(500);
      expect(await response.json()).toMatchObject({ error: 'server_error' });
      await untilLogged(cli, /"level":50.*request errored/);
      const errors = logLines(cli).filter((line) => line.level === 50);
      expect(errors).toEqual([
        expect.objectContaining({ req: { id: 'support-ticket-4711' }, msg: expect.stringMatching(/^POST \/oauth\/token failed: .*users.*\n\s+at /s) }),
        expect.objectContaining({ req: expect.objectContaining({ id: 'support-ticket-4711' }), msg: 'request errored' }),
      ]);
    } finally {
      await Promise.all(started.splice(0).map((cli) => stopCli(cli, 'SIGKILL')));
      await database.drop();
    }
  });
});

describe('the test-helper area', () => {
  it.each([
    [['--host', '0.0.0.0'], /--host 0\.0\.0\.0 is reachable from other machines/],
    [['--base-url', 'https://tokenbell.example'], /the base URL https:\/\/tokenbell\.example is https/],
    [['--base-url', 'http://tokenbell.test:3000'], /the base URL http:\/\/tokenbell\.test:3000 names a host other than loopback/],
    [['--trust-proxy', 'loopback'], /--trust-proxy says a reverse proxy forwards other machines' requests/],
  ])('refuses to start where others reach it (%j) unless told it is meant', async (args, reason) => {
    // Refused before it listens: nothing is ever bound beyond loopback here.
    const cli = runCli(['--memory', '--test-helpers', ...args], await freePort());
    started.push(cli);
    expect((await cli.exited).code).toBe(1);
    expect(cli.stderr()).toMatch(reason);
    expect(cli.stderr()).toMatch(/add --test-helpers-on-public-host/);
    expect(cli.stderr().trim().split('\n')).toHaveLength(1);
    expect(cli.stdout()).toBe('');
  });

  it('starts behind https when told it is meant, and readiness says the area is on', async () => {
    const cli = await start(['--memory', '--test-helpers', '--base-url', 'https://tokenbell.example'], { TOKENBELL_TEST_HELPERS_ON_PUBLIC_HOST: 'true' });
    expect(await readiness(cli)).toEqual({ status: 'ok', store_check: [{ status: 'ok' }], test_helpers: true });
  });

  it('starts behind a trusted proxy with a public base URL when told it is meant', async () => {
    const cli = await start(['--memory', '--test-helpers', '--trust-proxy', 'loopback', '--base-url', 'http://tokenbell.test', '--test-helpers-on-public-host']);
    expect(await readiness(cli)).toEqual({ status: 'ok', store_check: [{ status: 'ok' }], test_helpers: true });
  });
});

describe("the test-helper area's administrator token", () => {
  it('is printed once at start, for a suite in any language with no seed, and answers the area', async () => {
    const cli = await start(['--memory', '--test-helpers']);
    const token = /^ {2}(tbpat-\S+)$/m.exec(cli.stderr())![1]!;
    const clock = await fetch(`${cli.baseUrl}/api/v4/test_helpers/clock`, { headers: { 'private-token': token } });
    expect(clock.status).toBe(200);
    // A reset goes back to the state the start made, the token with it.
    expect((await fetch(`${cli.baseUrl}/api/v4/test_helpers/reset`, { method: 'POST', headers: { 'private-token': token } })).status).toBe(204);
    expect((await fetch(`${cli.baseUrl}/api/v4/test_helpers/clock`, { headers: { 'private-token': token } })).status).toBe(200);
  });

  it('is the one given, kept across restarts of the same store, and never printed', async () => {
    const file = join(dir.path, 'helpers-token.json');
    const token = 'tbpat-python-suite-token-0123456789';
    for (let start_ = 0; start_ < 2; start_++) {
      const cli = await start(['--data', file, '--test-helpers'], { TOKENBELL_TEST_HELPERS_TOKEN: token });
      expect((await fetch(`${cli.baseUrl}/api/v4/test_helpers/clock`, { headers: { 'private-token': token } })).status).toBe(200);
      expect(cli.output()).not.toContain(token);
      await stopCli(cli);
    }
    expect((await readDurableData(file)).users.map((user) => user.username)).toEqual(['root']);
  });

  it('is refused without the area, or when it is not a token', async () => {
    for (const [args, env, reason] of [
      [['--memory'], { TOKENBELL_TEST_HELPERS_TOKEN: 'tbpat-python-suite-token-0123456789' }, /TOKENBELL_TEST_HELPERS_TOKEN is the test-helper area's token: it needs --test-helpers/],
      [['--memory', '--test-helpers', '--test-helpers-token', 'short'], {}, /--test-helpers-token \(TOKENBELL_TEST_HELPERS_TOKEN\) must be 20 to 255 printable ASCII characters/],
    ] as const) {
      const cli = runCli([...args], await freePort(), [], env);
      started.push(cli);
      expect((await cli.exited).code).toBe(1);
      expect(cli.stderr()).toMatch(reason);
      expect(cli.stderr().trim().split('\n')).toHaveLength(1);
    }
  });
});
