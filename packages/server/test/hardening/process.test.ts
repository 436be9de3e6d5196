// The server as a process, through its CLI on a real data file: SIGKILL at random moments never loses an
// acknowledged write nor leaves a file that does not parse, and a server killed as PID 1 (a container's) starts
// again as PID 1 over its own lock; a second server on the same file, and a corrupt or unreadable file, stop startup
// with a message naming the file and leave it byte-for-byte as it was.
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { digest, newSecret } from '../../src/domain/secrets.js';
import { readDurableData } from '../../src/store/file/store.js';
import { Journal, journalFileOf } from '../../src/store/file/journal.js';
import type { StoreData } from '../../src/store/file/schema.js';
import type { WriteStats } from '../../src/store/file/writer.js';
import { freshMigratedDatabase } from '../../../../test/support/postgres.js';
import { exampleSeed, freePort, runCli, startCli, stopCli, tempDir, type CliProcess } from './support.js';
import { seededRandom } from '../../../../test/support/random.js';

const pat = 'tbpat-jsmith-example-token-000000000000000000';
const started: CliProcess[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((cli) => stopCli(cli, 'SIGKILL')));
});

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

const track = (cli: CliProcess) => {
  started.push(cli);
  return cli;
};

/** Lane 1's writes cycle through this many of jsmith's addresses: a notification e-mail must be one of the user's own. */
const laneAddresses = 16;
const laneEmail = (n: number) => `jsmith+${n % laneAddresses}@example.com`;
/** Which of the writes `from`..`to` (fewer than laneAddresses) names `stored`; undefined for none. */
function laneWriteOf(stored: string | null | undefined, from: number, to: number): number | undefined {
  expect(to - from).toBeLessThan(laneAddresses);
  for (let n = from; n <= to; n++) if (laneEmail(n) === stored) return n;
  return undefined;
}

describe('SIGKILL at random moments', () => {
  it('never loses an acknowledged write, never leaves a torn file, and the restart takes over the dead lock', async () => {
    const file = join(dir.path, 'crash.json');
    // The example fixture, with lane 1's addresses given to jsmith.
    const seedFile = join(dir.path, 'crash-seed.json');
    const fixture = JSON.parse(await readFile(exampleSeed, 'utf8')) as { users: Array<{ username: string; secondary_emails?: string[] }> };
    const jsmith = fixture.users.find((u) => u.username === 'jsmith')!;
    jsmith.secondary_emails = [...(jsmith.secondary_emails ?? []), ...Array.from({ length: laneAddresses }, (_, n) => laneEmail(n))];
    await writeFile(seedFile, JSON.stringify(fixture));
    const seed = Number(process.env.TOKENBELL_CRASH_SEED ?? 20_260_707);
    const rand = seededRandom(seed);
    const rounds = 5;
    // Lane 1: one writer changes the global notification e-mail with every write, one request at a time, so the file
    // must hold the last acknowledged write or the one in flight at the kill (which may land).
    let lastAckedEmail = 0;
    let sentEmail = 0;
    // Lane 2: password grants, concurrently; each acknowledged token must be in the file after the restart.
    const ackedTokens: string[] = [];
    let killedWithLock = 0;

    for (let round = 0; round < rounds; round++) {
      const cli = track(await startCli(['--data', file, ...(round === 0 ? ['--seed', seedFile] : [])]));
      const base = cli.baseUrl;
      // Set just before the kill: from then on a failed request is expected and stops its lane.
      let killed = false;
      const emailLane = (async () => {
        while (!killed) {
          const n = ++sentEmail;
          try {
            const response = await fetch(`${base}/api/v3/notification_settings?notification_email=${encodeURIComponent(laneEmail(n))}`, {
              method: 'PUT',
              headers: { 'private-token': pat },
            });
            if (response.status === 200) lastAckedEmail = n;
            else throw new Error(`unexpected ${response.status}: ${await response.text()}`);
          } catch (error) {
            if (!killed) throw error;
          }
        }
      })();
      const grantLanes = Array.from({ length: 3 }, async () => {
        while (!killed) {
          try {
            const response = await fetch(`${base}/oauth/token`, {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded' },
              body: new URLSearchParams({ grant_type: 'password', username: 'jsmith', password: 'correct-horse-battery' }),
            });
            const body = (await response.json()) as { access_token?: string };
            if (response.status !== 200) throw new Error(`unexpected ${response.status}: ${JSON.stringify(body)}`);
            ackedTokens.push(body.access_token!);
          } catch (error) {
            if (!killed) throw error;
          }
        }
      });
      const lanes = Promise.all([emailLane, ...grantLanes]);
      // Once both lanes have had a write acknowledged in this round (so every round tests something, however slow
      // the machine), a random moment up to 700 ms later.
      const emailsBefore = lastAckedEmail;
      const tokensBefore = ackedTokens.length;
      while (lastAckedEmail === emailsBefore || ackedTokens.length === tokensBefore) {
        await Promise.race([new Promise((r) => setTimeout(r, 10)), lanes]);
      }
      await Promise.race([new Promise((r) => setTimeout(r, Math.floor(rand() * 700))), lanes]);
      killed = true;
      cli.child.kill('SIGKILL');
      await cli.exited;
      await lanes;
      started.splice(started.indexOf(cli), 1);

      // The SIGKILLed process could not remove its lock: the next start must recognise the dead pid and take over.
      const lock = await readFile(`${file}.lock`, 'utf8').catch(() => null);
      if (lock !== null) {
        expect(Number(lock.trim())).toBe(cli.child.pid);
        killedWithLock++;
      }
      // What the next start will read: the data file (which must parse) with its journal applied.
      const data = await readDurableData(file);
      const global = data.notification_settings.find((s) => s.source_type === 'global' && s.user_id === 1);
      expect(laneWriteOf(global?.notification_email, lastAckedEmail, sentEmail), global?.notification_email ?? 'none').toBeDefined();
      const digests = new Set(data.access_tokens.map((t) => t.token_digest));
      expect(ackedTokens.filter((t) => !digests.has(digest(t)))).toEqual([]);
    }

    // The last restart serves what was acknowledged before the last kill.
    const cli = track(await startCli(['--data', file]));
    const settings = (await (await fetch(`${cli.baseUrl}/api/v3/notification_settings`, { headers: { 'private-token': pat } })).json()) as {
      notification_email: string;
    };
    expect(laneWriteOf(settings.notification_email, lastAckedEmail, sentEmail), settings.notification_email).toBeDefined();
    const lastToken = ackedTokens.at(-1)!;
    expect((await fetch(`${cli.baseUrl}/api/v3/user`, { headers: { authorization: `Bearer ${lastToken}` } })).status).toBe(200);
    const final = await fetch(`${cli.baseUrl}/api/v3/notification_settings?notification_email=js%40work.example.com`, {
      method: 'PUT',
      headers: { 'private-token': pat },
    });
    expect(final.status).toBe(200);
    await stopCli(cli);
    started.splice(0);
    // A clean stop folds the journal into the data file, which alone then holds everything (for backups and edits).
    const alone = JSON.parse(await readFile(file, 'utf8')) as StoreData;
    expect(alone.notification_settings.find((s) => s.source_type === 'global' && s.user_id === 1)?.notification_email).toBe('js@work.example.com');
    expect((await Journal.read(journalFileOf(file)))?.ops).toEqual([]);

    console.log(
      `crash safety: ${rounds} SIGKILL rounds (seed ${seed}), ${killedWithLock} left a lock with a dead pid, ` +
        `${lastAckedEmail} e-mail writes and ${ackedTokens.length} password grants acknowledged, none lost`,
    );
    expect(killedWithLock).toBe(rounds);
  }, 60_000);
});

describe('SIGKILL during refresh rotations whose journal syncs overlap', () => {
  it('never loses an acknowledged rotation: its new token is on disk and the token it spent is revoked', async () => {
    const file = join(dir.path, 'rotations.json');
    const statsFile = join(dir.path, 'rotations-stats.json');
    const seeded = track(await startCli(['--data', file, '--seed', exampleSeed]));
    await stopCli(seeded);
    started.splice(0);
    // Refresh tokens written straight into the stopped server's file (which alone is then the whole state), one fresh
    // chain per lane and round: a rotation in flight at the kill may have landed, spending the lane's last token.
    const lanes = 10;
    const rounds = 3;
    const data = JSON.parse(await readFile(file, 'utf8')) as StoreData;
    const app = data.applications.find((a) => a.uid === 'example-client-id-0000000000000000')!;
    const now = Math.floor(Date.now() / 1000);
    const starts = Array.from({ length: lanes * rounds }, () => newSecret('refreshToken'));
    data.access_tokens.push(
      ...starts.map((refresh, i) => ({
        id: `kill-rotation-${i}`,
        token_digest: digest(`${refresh}-access`),
        refresh_digest: digest(refresh),
        application_id: app.id,
        user_id: app.owner_id,
        scopes: ['api' as const],
        created_at: now,
        expires_in: 7200,
        revoked_at: null,
        code_id: null,
        auth_time: null,
      })),
    );
    await writeFile(file, JSON.stringify(data));
    const basic = `Basic ${Buffer.from('example-client-id-0000000000000000:tbcs_example-client-secret-000000000000000000').toString('base64')}`;
    const seed = Number(process.env.TOKENBELL_CRASH_SEED ?? 20_261_129);
    const rand = seededRandom(seed);
    /** Every acknowledged rotation: the token it spent and the one it answered. */
    const acked: Array<{ spent: string; issued: string }> = [];
    let overlapped = 0;

    for (let round = 0; round < rounds; round++) {
      const cli = track(await startCli(['--data', file], 15_000, [], { TOKENBELL_STORE_STATS: statsFile }));
      let killed = false;
      const ackedBefore = acked.length;
      const laneRuns = Array.from({ length: lanes }, async (_, lane) => {
        let current = starts[round * lanes + lane]!;
        while (!killed) {
          try {
            const response = await fetch(`${cli.baseUrl}/oauth/token`, {
              method: 'POST',
              headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
              body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: current }),
            });
            const body = (await response.json()) as { refresh_token?: string };
            if (response.status !== 200) throw new Error(`unexpected ${response.status}: ${JSON.stringify(body)}`);
            acked.push({ spent: current, issued: body.refresh_token! });
            current = body.refresh_token!;
          } catch (error) {
            if (!killed) throw error;
          }
        }
      });
      const all = Promise.all(laneRuns);
      while (acked.length < ackedBefore + 5 * lanes) await Promise.race([new Promise((r) => setTimeout(r, 10)), all]);
      await Promise.race([new Promise((r) => setTimeout(r, Math.floor(rand() * 500))), all]);
      // What the writer did so far in this process (reported on SIGUSR2), then the kill.
      cli.child.kill('SIGUSR2');
      await expect.poll(async () => (await readFile(statsFile, 'utf8').catch(() => '')).length, { timeout: 5_000 }).toBeGreaterThan(0);
      const stats = JSON.parse(await readFile(statsFile, 'utf8')) as WriteStats;
      overlapped += stats.overlappedSyncs;
      await rm(statsFile);
      killed = true;
      cli.child.kill('SIGKILL');
      await cli.exited;
      await all;
      started.splice(started.indexOf(cli), 1);

      const onDisk = await readDurableData(file);
      const byRefresh = new Map(onDisk.access_tokens.filter((t) => t.refresh_digest !== null).map((t) => [t.refresh_digest, t]));
      expect(acked.filter(({ issued }) => !byRefresh.has(digest(issued))).length).toBe(0);
      expect(acked.filter(({ spent }) => byRefresh.get(digest(spent))?.revoked_at === null).length).toBe(0);
    }
    console.log(`crash safety: ${rounds} SIGKILL rounds (seed ${seed}), ${acked.length} refresh rotations acknowledged on ${lanes} lanes, ${overlapped} journal syncs overlapped, none lost`);
    // The kills hit a writer whose syncs did overlap, or this test would prove nothing about them.
    expect(overlapped).toBeGreaterThan(0);
  }, 60_000);
});

/**
 * `unshare` (util-linux) running the server as PID 1 of a PID namespace, as in a container; as root, or in a user
 * namespace of its own otherwise. `--kill-child`: the server dies with SIGKILL when `unshare` does.
 */
const asPid1 = ['unshare', ...(process.getuid?.() === 0 ? [] : ['--user', '--map-root-user']), '--pid', '--fork', '--kill-child'];
const pid1Works = spawnSync(asPid1[0]!, [...asPid1.slice(1), 'true']).status === 0;

describe('restarts in a container', () => {
  // Skipped on a machine that cannot make a PID namespace, but never in CI, where it fails and says why.
  it.runIf(pid1Works || process.env.CI === 'true')('starts again as PID 1 after a SIGKILL as PID 1, over its own stale lock, with its data', async () => {
    if (!pid1Works) throw new Error(`${asPid1.join(' ')} true failed: this test needs util-linux's unshare and PID namespaces (root, or user namespaces allowed)`);
    const file = join(dir.path, 'pid1.json');
    const first = track(await startCli(['--data', file, '--seed', exampleSeed], 15_000, asPid1));
    const put = await fetch(`${first.baseUrl}/api/v3/notification_settings?notification_email=js%40work.example.com`, { method: 'PUT', headers: { 'private-token': pat } });
    expect(put.status).toBe(200);
    first.child.kill('SIGKILL');
    await first.exited;
    started.splice(started.indexOf(first), 1);
    // The server was PID 1, and died (with unshare) without removing its lock.
    await expect(fetch(`${first.baseUrl}/-/liveness`)).rejects.toThrow();
    expect(await readFile(`${file}.lock`, 'utf8')).toBe('1\n');

    const second = track(await startCli(['--data', file], 15_000, asPid1));
    expect(await readFile(`${file}.lock`, 'utf8')).toBe('1\n');
    const settings = await fetch(`${second.baseUrl}/api/v3/notification_settings`, { headers: { 'private-token': pat } });
    expect(await settings.json()).toMatchObject({ notification_email: 'js@work.example.com' });
  }, 60_000);
});

describe('one writer per data file', () => {
  it('refuses a second server on the same file, naming the file and the owner, and leaves the file alone', async () => {
    const file = join(dir.path, 'shared.json');
    const first = track(await startCli(['--data', file, '--seed', exampleSeed]));
    const before = await readFile(file);
    const second = runCli(['--data', file], await freePort());
    started.push(second);
    const { code } = await second.exited;
    expect(code).toBe(1);
    expect(second.output()).toContain(`the data file ${file} is in use by process ${first.child.pid}`);
    expect(second.output()).not.toMatch(/\n\s+at /);
    expect(await readFile(file)).toEqual(before);
    // The first server is unaffected and still owns the lock.
    expect((await fetch(`${first.baseUrl}/api/v3/user`, { headers: { 'private-token': pat } })).status).toBe(200);
    expect((await readFile(`${file}.lock`, 'utf8')).trim()).toBe(String(first.child.pid));
  });
});

describe('a data file that cannot be used', () => {
  const cases: Array<[string, Buffer]> = [
    ['torn JSON', Buffer.from('{"version":1,"secrets":{"sessionKey":"k"},"users":[{"id":1,')],
    ['a JSON array', Buffer.from('[1,2,3]')],
    ['invalid UTF-8 and NUL bytes', Buffer.from([0x7b, 0xff, 0x00, 0xfe, 0x7d])],
    ['an empty file', Buffer.alloc(0)],
  ];
  it.each(cases)('stops startup on %s, naming the file and leaving it byte-for-byte unchanged', async (_name, content) => {
    const file = join(dir.path, `corrupt-${content.length}.json`);
    await writeFile(file, content);
    const cli = runCli(['--data', file], await freePort());
    started.push(cli);
    const { code } = await cli.exited;
    expect(code).toBe(1);
    expect(cli.output()).toMatch(new RegExp(`^tokenbell: .*${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}.*left unchanged`, 'm'));
    expect(cli.output()).not.toMatch(/\n\s+at /);
    expect(await readFile(file)).toEqual(content);
    // The failed start released its lock, so a fixed file can be served at once.
    await expect(stat(`${file}.lock`)).rejects.toThrow();
  });

  it.skipIf(process.getuid?.() === 0)('stops startup on an unreadable file, naming it and leaving it unchanged', async () => {
    const file = join(dir.path, 'unreadable.json');
    await writeFile(file, '{}');
    await chmod(file, 0o000);
    const cli = runCli(['--data', file], await freePort());
    started.push(cli);
    expect((await cli.exited).code).toBe(1);
    expect(cli.output()).toContain(`cannot read the data file ${file}`);
    await chmod(file, 0o600);
    expect(await readFile(file, 'utf8')).toBe('{}');
  });

  it('stops startup on a directory where the data file should be, naming it', async () => {
    const file = join(dir.path, 'a-directory.json');
    await mkdir(file);
    const cli = runCli(['--data', file], await freePort());
    started.push(cli);
    expect((await cli.exited).code).toBe(1);
    expect(cli.output()).toContain(`cannot read the data file ${file}`);
    expect(cli.output()).not.toMatch(/\n\s+at /);
  });

  it('warns at start-up, in one line, when --trust-proxy true lets clients choose their address', async () => {
    const cli = track(await startCli(['--memory', '--trust-proxy', 'true']));
    // A warning line of the log, as every line of a start is.
    const warnings = cli.stdout().split('\n').filter((line) => line.includes('"level":40')).map((line) => JSON.parse(line) as { msg: string });
    expect(warnings).toEqual([{ level: 40, time: expect.any(Number), pid: expect.any(Number), hostname: expect.any(String), msg: expect.stringMatching(/^--trust-proxy true believes any X-Forwarded-For/) }]);
    const quiet = track(await startCli(['--memory', '--trust-proxy', 'loopback']));
    expect(quiet.output()).not.toContain('--trust-proxy');
  });

  it('stops startup on a seed file that is not JSON, naming the file, without a stack trace', async () => {
    const file = join(dir.path, 'broken-seed.json');
    await writeFile(file, '{ "users": [ ');
    const cli = runCli(['--memory', '--seed', file], await freePort());
    started.push(cli);
    expect((await cli.exited).code).toBe(1);
    expect(cli.output()).toContain(`${file}: `);
    expect(cli.output()).toMatch(/JSON/);
    expect(cli.output()).not.toMatch(/\n\s+at /);
  });

  // On both stores: this file is not run again in the `postgres` test project (vitest.config.ts), being about the
  // data file and the process, but the demo account is the store's.
  it.each(['file', 'postgres'] as const)('prints no credentials and creates no demo account when it cannot listen, and says which flag to change (%s store)', async (kind) => {
    const file = join(dir.path, 'busy-port.json');
    const database = kind === 'postgres' ? await freshMigratedDatabase(inject('postgresUrl')) : undefined;
    // Asked for: without a terminal, and never by default on a database, a start makes no demo account.
    const where = [...(database ? ['--database-url', database.url] : ['--data', file]), '--demo'];
    const users = async () => {
      if (!database) return (await readDurableData(file)).users.length;
      const { default: pg } = await import('pg');
      const client = new pg.Client(database.url);
      await client.connect();
      try {
        return Number((await client.query<{ count: string }>('SELECT count(*) AS count FROM users')).rows[0]!.count);
      } finally {
        await client.end();
      }
    };
    try {
      const busy = track(await startCli(['--memory']));
      const cli = runCli(where, busy.port);
      started.push(cli);
      expect((await cli.exited).code).toBe(1);
      expect(cli.output()).toMatch(/another process is listening there; choose another --port/);
      expect(cli.output()).not.toContain('demo');
      expect(await users()).toBe(0);
      // The next start, on a free port, is the one that creates the account and says so.
      const next = track(await startCli(where));
      expect(next.output()).toMatch(/as demo \/ \S{16}\n {2}group: {10}demo-group\n {2}project: {8}demo-group\/demo-project/);
      expect(await users()).toBe(1);
    } finally {
      if (database) {
        // Its servers first: a database is dropped once nobody is connected.
        await Promise.all(started.splice(0).map((cli) => stopCli(cli, 'SIGKILL')));
        await database.drop();
      }
    }
  });

  it.each([
    [['--host', '192.0.2.1', '--memory'], /--host names no address of this machine/],
    [['--host', 'no-such-host.invalid', '--memory'], /--host no-such-host\.invalid: no such host name/],
    [['--data', '/etc/hostname/tokenbell.json'], /cannot create the directory \/etc\/hostname for the data file .*choose another --data/],
  ])('stops on %j with one line naming the flag, no stack trace', async (args, message) => {
    const cli = runCli(args, await freePort());
    started.push(cli);
    expect((await cli.exited).code).toBe(1);
    expect(cli.output()).toMatch(message);
    expect(cli.output()).not.toMatch(/\n\s+at /);
  });

  it('answers --version and -h without starting', async () => {
    const version = runCli(['--version'], await freePort());
    started.push(version);
    expect((await version.exited).code).toBe(0);
    expect(version.output().trim()).toMatch(/^\d+\.\d+\.\d+/);
    const help = runCli(['-h'], await freePort());
    started.push(help);
    expect((await help.exited).code).toBe(0);
    expect(help.output()).toContain('TOKENBELL_INTROSPECTION_CLIENTS');
  });
});
