// An instance on PostgreSQL: a pool of connections, the schema checked (or migrated) before anything is served, and
// the storage, cookie key and throttle every instance on the database shares.
import pg from 'pg';
import type { Backend } from '../backend.js';
import { describeDatabase } from '../backend.js';
import { ExplainedError } from '../../explained-error.js';
import { appliedMigrations, checkNotNewer, knownMigrations, migrate } from './migrate.js';
import { postgresStorage } from './storage.js';
import { postgresThrottleBacking } from './throttle.js';

export class DatabaseError extends ExplainedError {
  override name = 'DatabaseError';
}

export async function openPostgresBackend({ url, poolSize, migrate: runMigrations }: { url: string; poolSize: number; migrate: boolean }): Promise<Backend> {
  const where = describeDatabase(url);
  if (runMigrations) await migrate(url);
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
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
    const storage = postgresStorage(pool, { describe: where });
    return { storage, sessionSecret: await storage.maintenance.instanceSecret('session_key'), throttleBacking: postgresThrottleBacking(pool) };
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
}
