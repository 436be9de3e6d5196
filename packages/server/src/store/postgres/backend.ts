// An instance on PostgreSQL: a pool of connections, the schema checked (or migrated) before anything is served, and
// the storage, cookie key and throttle every instance on the database shares.
import pg from 'pg';
import type { Backend } from '../backend.js';
import { describeDatabase } from '../backend.js';
import { defaultOf } from '../../config.js';
import { ExplainedError } from '../../explained-error.js';
import { appliedMigrations, checkNotNewer, knownMigrations, migrate } from './migrate.js';
import { postgresStorage } from './storage.js';
import { TextOnlyClient } from './text-only-client.js';
import { postgresThrottleBacking } from './throttle.js';
import { guardStorage, guardThrottleBacking } from './unavailable.js';

export class DatabaseError extends ExplainedError {
  override name = 'DatabaseError';
}

export interface PostgresBackendOptions {
  url: string;
  poolSize: number;
  /** The longest a connection, a wait for a free one, or a statement may take (--database-timeout's default when absent). */
  timeoutSeconds?: number;
  migrate: boolean;
}

/**
 * The pool's limits. Without them a stalled database (its processes frozen, the network partitioned) holds every
 * request for as long as the stall lasts, and the requests behind them queue for a connection without end.
 */
export function poolOptions({ url, poolSize, timeoutSeconds = Number(defaultOf('database-timeout')) }: Omit<PostgresBackendOptions, 'migrate'>): pg.PoolConfig {
  const timeout = timeoutSeconds * 1000;
  return {
    connectionString: url,
    max: poolSize,
    // A new connection, and a wait for a free one when all are busy, both end here.
    connectionTimeoutMillis: timeout,
    // A database that answers cancels a slow statement itself and the connection stays usable; the client's own limit,
    // a second later, is for one that cannot answer at all: that connection is then dropped, not reused.
    statement_timeout: timeout,
    query_timeout: timeout + 1000,
    // An idle connection whose peer vanished (a partition, a failover) is noticed instead of failing the next request.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}

export async function openPostgresBackend({ url, poolSize, timeoutSeconds, migrate: runMigrations }: PostgresBackendOptions): Promise<Backend> {
  const where = describeDatabase(url);
  if (runMigrations) await migrate(url);
  const pool = new pg.Pool({ ...poolOptions({ url, poolSize, timeoutSeconds }), Client: TextOnlyClient });
  // An idle connection the server drops (a restart, a failover) must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  try {
    const client = await pool.connect().catch((error: Error) => {
      throw new DatabaseError(`cannot connect to ${where} (--database-url): ${error.message}; check the URL, and that PostgreSQL runs there and takes connections`);
    });
    try {
      const applied = await appliedMigrations(client);
      const known = knownMigrations();
      checkNotNewer(applied, known);
      const missing = known.filter((name) => !applied.includes(name));
      if (missing.length > 0) {
        throw new DatabaseError(`${where} lacks migration ${missing.join(', ')}: run tokenbell migrate --database-url URL, or start with --migrate`);
      }
    } finally {
      client.release();
    }
    const storage = guardStorage(postgresStorage(pool, { describe: where }));
    return { storage, sessionSecret: await storage.maintenance.instanceSecret('session_key'), throttleBacking: guardThrottleBacking(postgresThrottleBacking(pool)) };
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
}
