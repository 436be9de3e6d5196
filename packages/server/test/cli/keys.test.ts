// `tokenbell keys rotate` run as an operator runs it (the CLI from source, through tsx): on a data file, refused while
// a server runs on it and naming that server, then done with the server stopped, which publishes the new key and the
// old one at its next start; on PostgreSQL beside nothing (two instances running is test/multi-instance's), and with
// --drop-retired, which leaves the new key alone; and each operator's mistake explained in one line that names the
// flag or the file, never a stack trace or key material.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import pg from 'pg';
import { spawnProcess } from '../../../../scripts/lib/processes.js';
import { readDurableData } from '../../src/store/file/store.js';
import { freshMigratedDatabase } from '../../../../test/support/postgres.js';
import { cliPath, repoRoot, startCli, stopCli, tempDir } from '../hardening/support.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir?.remove());

/** `tokenbell keys ...` as an operator types it; what it printed, on stdout and stderr together. */
async function keys(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; output: string }> {
  const cli = spawnProcess(process.execPath, [cliPath, 'keys', ...args], { cwd: repoRoot, env: { NODE_ENV: 'production', ...env } });
  const { code } = await cli.exited;
  return { code, output: cli.output() };
}

const publishedKids = async (baseUrl: string) => ((await (await fetch(`${baseUrl}/oauth/discovery/keys`)).json()) as { keys: Array<{ kid: string }> }).keys.map((k) => k.kid);

/** One line of output, without a stack trace or anything of a PEM. */
function expectOneCleanLine(output: string): void {
  expect(output.trimEnd().split('\n')).toHaveLength(1);
  expect(output).not.toMatch(/\n\s+at |PRIVATE KEY|BEGIN/);
}

describe('tokenbell keys rotate', () => {
  // Five processes in a row through tsx, two of them servers: 15-25 s on a quiet two-core machine.
  it('rotates the keys of a data file once its server is stopped, refusing while it runs', { timeout: 90_000 }, async () => {
    const file = join(dir.path, 'keys.json');
    const server = await startCli(['--data', file]);
    let first: string;
    try {
      [first] = (await publishedKids(server.baseUrl)) as [string];
      const busy = await keys(['rotate', '--data', file]);
      expect(busy.code).toBe(1);
      expect(busy.output).toMatch(new RegExp(`^tokenbell: the data file .*keys\\.json is in use by process ${server.child.pid} .*; a data file's keys change only while no server runs on it\\n$`));
      expectOneCleanLine(busy.output);
    } finally {
      await stopCli(server);
    }

    const rotated = await keys(['rotate', '--data', file]);
    expect(rotated.code).toBe(0);
    const [, kid, from] = /^new signing key ([\w-]{43}), published now and signing from (\S+Z); ([\w-]{43}) signs until then, then stays published for a day; on the server from its next start\n$/.exec(rotated.output) ?? [];
    expect(rotated.output).toContain(`; ${first} signs until then`);
    // Ten minutes and the margin on, to the second.
    expect(Date.parse(from!) / 1000 - Date.now() / 1000).toBeGreaterThan(600);
    expect(Date.parse(from!) / 1000 - Date.now() / 1000).toBeLessThanOrEqual(605);
    expectOneCleanLine(rotated.output);
    expect((await readDurableData(file)).signing_keys.map((k) => [k.kid, k.retired_at === null])).toEqual([
      [first, false],
      [kid, true],
    ]);

    const again = await startCli(['--data', file]);
    try {
      expect(await publishedKids(again.baseUrl)).toEqual([kid, first]);
    } finally {
      await stopCli(again);
    }
  });

  it('rotates the keys of a PostgreSQL database, the first time making its first key', { timeout: 60_000 }, async () => {
    const database = await freshMigratedDatabase(inject('postgresUrl'));
    const pool = new pg.Pool({ connectionString: database.url, max: 1 });
    try {
      const made = await keys(['rotate', '--database-url', database.url]);
      expect(made).toMatchObject({ code: 0, output: expect.stringMatching(/^new signing key [\w-]{43}, signing now; on every instance on the database, without a restart\n$/) });
      const [, first] = /^new signing key ([\w-]{43})/.exec(made.output)!;
      // From the environment, as a deploy step would have it.
      const rotated = await keys(['rotate'], { DATABASE_URL: database.url });
      expect(rotated.code).toBe(0);
      expect(rotated.output).toContain(`; ${first} signs until then, then stays published for a day;`);
      expectOneCleanLine(rotated.output);
      const [, second] = /^new signing key ([\w-]{43})/.exec(rotated.output)!;
      const { rows } = await pool.query<{ kid: string; newest: boolean }>('SELECT kid, retired_at IS NULL AS newest FROM signing_keys ORDER BY newest DESC');
      expect(rows).toEqual([
        { kid: second, newest: true },
        { kid: first, newest: false },
      ]);

      // A leaked key: the new one signs at once, and the two before it, the pending one too, are gone.
      const dropped = await keys(['rotate', '--drop-retired', '--database-url', database.url]);
      expect(dropped.code).toBe(0);
      expectOneCleanLine(dropped.output);
      const [, third] = /^new signing key ([\w-]{43}), signing now; (\S+), (\S+) dropped: unpublished, what they signed no longer verifies; on every instance on the database, without a restart\n$/.exec(dropped.output) ?? [];
      expect(dropped.output).toContain(first);
      expect(dropped.output).toContain(second);
      const { rows: left } = await pool.query<{ kid: string }>('SELECT kid FROM signing_keys');
      expect(left).toEqual([{ kid: third }]);
    } finally {
      await pool.end();
      await database.drop();
    }
  });

  it("explains an operator's mistakes in one line, naming the flag or the file", { timeout: 60_000 }, async () => {
    const directory = join(dir.path, 'a-directory.json');
    await mkdir(directory);
    const notAStore = join(dir.path, 'not-a-store.json');
    await writeFile(notAStore, '[1, 2, 3]');
    const mistakes: Array<[string[], RegExp]> = [
      [['rotate', '--drop-retired=yes'], /^tokenbell: keys rotate: Option '--drop-retired' does not take an argument/],
      [['rotate', '--frob'], /^tokenbell: keys rotate: Unknown option '--frob'; it takes --data FILE or --database-url URL \(tokenbell keys --help\)\n$/],
      [['rotate', '--data', join(dir.path, 'missing.json')], /^tokenbell: there is no data file .*missing\.json; name the server's with --data FILE \(or TOKENBELL_DATA\), or start the server once to make it\n$/],
      [['rotate', '--data', directory], /^tokenbell: cannot read the data file .*a-directory\.json: EISDIR/],
      [['rotate', '--data', notAStore], /^tokenbell: the data file .*not-a-store\.json is not a JSON object; it was left unchanged\n$/],
      [['rotate', '--database-url', 'postgres://tokenbell:hunter2-secret@127.0.0.1:1/tokenbell'], /^tokenbell: cannot connect to PostgreSQL postgres:\/\/tokenbell@127\.0\.0\.1:1\/tokenbell \(--database-url\): .*ECONNREFUSED.*; check the URL/],
      [['rotate', '--database-url', 'mysql://x'], /^tokenbell: --database-url must be a postgres:\/\/ or postgresql:\/\/ URL\n$/],
      [['rotate', '--data', notAStore, '--database-url', 'postgres://x'], /^tokenbell: --database-url and --data contradict each other/],
      [['shuffle'], /^tokenbell: unknown keys command "shuffle"/],
    ];
    const answers = await Promise.all(mistakes.map(([args]) => keys(args)));
    answers.forEach((answer, i) => {
      const [args, expected] = mistakes[i]!;
      expect({ args, ...answer }).toEqual({ args, code: 1, output: expect.stringMatching(expected) });
      if (args[0] === 'rotate') expectOneCleanLine(answer.output);
      expect(answer.output).not.toContain('hunter2');
    });
  });

  it('prints its usage for --help and without a command', async () => {
    const [help, bare] = await Promise.all([keys(['rotate', '--help']), keys([])]);
    for (const answer of [help, bare]) {
      expect(answer.code).toBe(0);
      expect(answer.output).toContain('Usage: tokenbell keys rotate [--drop-retired] [--data FILE | --database-url URL]');
    }
  });
});
