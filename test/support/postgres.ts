// A throwaway PostgreSQL cluster for the tests: Debian's postgresql (15), initialised in a temporary directory and
// listening on a free loopback port, run as the `postgres` user when the tests run as root (PostgreSQL refuses to
// run as root). fsync is off: these tests are about behaviour, not durability. Missing binaries are an error that
// names the package, never a skip.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** initdb and postgres: on PATH, or where Debian's package puts them (not on PATH). */
function binary(name: 'initdb' | 'postgres'): string {
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir && existsSync(join(dir, name))) return join(dir, name);
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) {
    const path = join('/usr/lib/postgresql', version, 'bin', name);
    if (existsSync(path)) return path;
  }
  throw new Error(`PostgreSQL is required for these tests but ${name} was not found; install it (apt-get install postgresql), as .ci/run does.`);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const id = (flag: string) =>
    run('id', [flag, 'postgres']).then(
      ({ stdout }) => Number(stdout.trim()),
      () => {
        throw new Error('PostgreSQL must not run as root and there is no postgres user; install postgresql (apt-get install postgresql), which creates it.');
      },
    );
  return { uid: await id('-u'), gid: await id('-g') };
}

export interface TestCluster {
  /** A superuser URL for the `postgres` database of the cluster. */
  url: string;
  /** The postmaster's process id (the benchmark moves the cluster between cores). */
  pid: number;
  stop(): Promise<void>;
}

/**
 * A throwaway cluster on a free loopback port. Functional tests run it without fsync (nothing they check needs the
 * disk, and it is several times faster); `durable` keeps PostgreSQL's defaults, for durability tests and benchmarks.
 */
export async function startCluster({ durable = false }: { durable?: boolean } = {}): Promise<TestCluster> {
  const asRoot = userInfo().uid === 0;
  const dir = mkdtempSync(join(tmpdir(), 'tokenbell-pg-'));
  const data = join(dir, 'data');
  // The postgres user must own the cluster and reach its directory.
  const user = asRoot ? await postgresUser() : undefined;
  if (user) {
    chmodSync(dir, 0o755);
    chownSync(dir, user.uid, user.gid);
  }
  // Node switches to the user itself, so signals reach postgres directly (a runuser wrapper would swallow them).
  const options = user ? { uid: user.uid, gid: user.gid, env: { ...process.env, HOME: dir } } : {};
  await run(binary('initdb'), ['-D', data, '-N', '-A', 'trust', '-U', 'postgres', '--no-instructions', '-E', 'UTF8', '--locale', 'C'], options);
  const port = await freePort();
  const fast = durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'];
  const args = ['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir, ...fast, '-c', 'max_connections=200'];
  const server: ChildProcess = spawn(binary('postgres'), args, { ...options, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  server.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const started = Date.now();
  for (;;) {
    if (log.includes('database system is ready to accept connections')) break;
    if (server.exitCode !== null || Date.now() - started > 20_000) throw new Error(`PostgreSQL did not start:\n${log}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    pid: server.pid!,
    async stop() {
      if (server.exitCode === null) {
        // SIGINT: "fast" shutdown, which ends client connections instead of waiting for them.
        server.kill('SIGINT');
        await new Promise((resolve) => server.once('exit', resolve));
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A new database in the cluster at `adminUrl`, empty or a copy of `template`; answers its URL and how to drop it. */
export async function createDatabase(adminUrl: string, template?: string): Promise<{ url: string; drop(): Promise<void> }> {
  const { default: pg } = await import('pg');
  const name = `tb_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    async drop() {
      const client = new pg.Client(adminUrl);
      await client.connect();
      try {
        // Without FORCE, which would kill connections a closing pool is still ending (their 'error' events then
        // surface in a test after its pool let go of them); a connection still closing is waited for a moment.
        for (let attempt = 0; ; attempt++) {
          try {
            await client.query(`DROP DATABASE IF EXISTS ${name}`);
            return;
          } catch (error) {
            if ((error as { code?: string }).code !== '55006' || attempt >= 50) throw error;
            await new Promise((resolve) => setTimeout(resolve, 40));
          }
        }
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * A new database migrated to the current schema, with `count` pools on it (two stand for two instances sharing
 * it); `close` ends the pools and drops the database.
 */
export async function migratedDatabase(adminUrl: string, count = 1): Promise<{ url: string; pools: import('pg').Pool[]; close(): Promise<void> }> {
  const [{ default: pg }, { migrate }] = await Promise.all([import('pg'), import('../../packages/server/src/store/postgres/migrate.js')]);
  const database = await createDatabase(adminUrl);
  await migrate(database.url);
  const pools = Array.from({ length: count }, () => new pg.Pool({ connectionString: database.url, max: 10 }));
  return {
    url: database.url,
    pools,
    async close() {
      for (const pool of pools) await pool.end();
      await database.drop();
    },
  };
}

const templates = new Map<string, Promise<string>>();

/**
 * A new database with the current schema, copied from a template migrated once per test file (a copy takes about
 * 30 ms, a migration several times that); `drop` removes it.
 */
export async function freshMigratedDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  let template = templates.get(adminUrl);
  if (!template) {
    template = (async () => {
      const { migrate } = await import('../../packages/server/src/store/postgres/migrate.js');
      const database = await createDatabase(adminUrl);
      await migrate(database.url);
      return new URL(database.url).pathname.slice(1);
    })();
    templates.set(adminUrl, template);
  }
  return createDatabase(adminUrl, await template);
}

/**
 * Makes the database at `url` take no writes (`readOnly`), or take them again, on every connection: new ones through
 * its default_transaction_read_only, those already open ended (a pool reconnects at its next query). Answers once
 * none of them is left, so that a server's next query already meets the new setting.
 */
export async function setDatabaseReadOnly(url: string, readOnly: boolean): Promise<void> {
  const { default: pg } = await import('pg');
  const name = new URL(url).pathname.slice(1);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client(admin.href);
  await client.connect();
  try {
    await client.query(`ALTER DATABASE ${pg.escapeIdentifier(name)} ${readOnly ? 'SET default_transaction_read_only = on' : 'RESET default_transaction_read_only'}`);
    for (let attempt = 0; ; attempt++) {
      const { rows } = await client.query<{ open: string }>(
        'SELECT count(pg_terminate_backend(pid)) AS open FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [name],
      );
      if (rows[0]!.open === '0') break;
      if (attempt >= 100) throw new Error(`connections to ${name} did not end`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await client.end();
  }
  // The pool that held them hears of their end on its own event loop, a moment later.
  await new Promise((resolve) => setTimeout(resolve, 100));
}

/** The text of every statement sent through `pool.query` from now on, in order (tests of what a store sends). */
export function recordStatements(pool: import('pg').Pool): string[] {
  const sent: string[] = [];
  const query = pool.query.bind(pool);
  pool.query = ((config: string | { text: string }, ...rest: unknown[]) => {
    sent.push(typeof config === 'string' ? config : config.text);
    return (query as (...args: unknown[]) => unknown)(config, ...rest);
  }) as typeof pool.query;
  return sent;
}
