// The PostgreSQL schema's migrations: plain SQL files in packages/server/migrations (shipped with the package), run
// by node-pg-migrate under its advisory lock, so that several instances started with --migrate at once apply each
// migration exactly once. A database whose schema is newer than this code (a migration it does not know has run)
// is refused before anything is applied: an older instance must not run on a newer schema.
import { existsSync, readdirSync } from 'node:fs';
import pg from 'pg';
import { ExplainedError } from '../../explained-error.js';
import { packageFile } from '../../package-files.js';

/** The migrations shipped in the package, beside its dist/. */
export const migrationsDirectory = packageFile('migrations');
export const migrationsTable = 'tokenbell_migrations';

export class MigrationError extends ExplainedError {
  override name = 'MigrationError';
}

/** The migrations this code knows, by name (file name without `.sql`), in order. */
export function knownMigrations(): string[] {
  if (!existsSync(migrationsDirectory)) throw new MigrationError(`the migrations directory ${migrationsDirectory} is missing; reinstall @tokenbell/server`);
  return readdirSync(migrationsDirectory)
    .filter((file) => file.endsWith('.sql'))
    .map((file) => file.slice(0, -'.sql'.length))
    .sort();
}

/** The migrations applied to the database, in order; empty for a database tokenbell never migrated. */
export async function appliedMigrations(client: pg.ClientBase): Promise<string[]> {
  const exists = await client.query<{ table: string | null }>('SELECT to_regclass($1) AS table', [migrationsTable]);
  if (exists.rows[0]?.table === null) return [];
  const { rows } = await client.query<{ name: string }>(`SELECT name FROM ${migrationsTable} ORDER BY run_on, id`);
  return rows.map((row) => row.name);
}

/** Throws MigrationError when the database has a migration this code does not know. */
export function checkNotNewer(applied: readonly string[], known: readonly string[]): void {
  const unknown = applied.filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    throw new MigrationError(
      `the database schema is newer than this tokenbell (it has migration ${unknown.join(', ')}, which this version does not know); run the newer tokenbell, or restore a backup taken before it migrated`,
    );
  }
}

export interface MigrationResult {
  /** The migrations this call applied, in order (none when the schema was current or another instance did it). */
  applied: string[];
}

/**
 * Applies every pending migration, in one transaction, under node-pg-migrate's advisory lock. Connection problems
 * and refusals become MigrationError with one line naming the cause.
 */
export async function migrate(databaseUrl: string, log: (line: string) => void = () => {}): Promise<MigrationResult> {
  const client = new pg.Client({ connectionString: databaseUrl });
  try {
    await client.connect();
  } catch (error) {
    throw new MigrationError(`cannot connect to the database (--database-url): ${(error as Error).message}`);
  }
  try {
    checkNotNewer(await appliedMigrations(client), knownMigrations());
    // Loaded on demand: it compiles a TypeScript loader at import, which a server that never migrates need not pay.
    const { runner } = await import('node-pg-migrate');
    const ran = await runner({
      dbClient: client,
      dir: migrationsDirectory,
      migrationsTable,
      direction: 'up',
      checkOrder: true,
      singleTransaction: true,
      // Instances starting together wait their turn instead of failing; the last ones find nothing to do.
      advisoryLockMode: 'wait',
      log: (line: string) => log(line),
    });
    // Checked again: another instance may have migrated further while this one waited for the lock.
    checkNotNewer(await appliedMigrations(client), knownMigrations());
    return { applied: ran.map((migration) => migration.name) };
  } catch (error) {
    if (error instanceof MigrationError) throw error;
    throw new MigrationError(`migrating the database failed: ${(error as Error).message}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
