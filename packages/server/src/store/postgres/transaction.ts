// One transaction on a pooled connection, for every PostgreSQL store module. READ COMMITTED, as PostgreSQL defaults
// to: the modules get their atomicity from row locks, advisory locks and unique indexes, not from isolation levels.
import type pg from 'pg';
import { isUnavailable } from './unavailable.js';

const SERIALIZATION_FAILURE = '40001';
const DEADLOCK = '40P01';
const attempts = 5;

/**
 * Runs `work` in a transaction and commits it; any error rolls it back and is thrown. A serialization failure or a
 * deadlock says nothing about the request, only about its timing, so the whole of `work` runs again (up to five
 * times): it must therefore do nothing outside the transaction that cannot be repeated.
 */
export async function transaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // A connection that cannot even roll back goes back to the pool as broken, so no one inherits its transaction; one
      // the database stopped answering is broken already, and a ROLLBACK would only wait out the timeout again.
      if (isUnavailable(error)) broken = error as Error;
      else await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      const code = (error as { code?: string }).code;
      if (attempt < attempts && !broken && (code === SERIALIZATION_FAILURE || code === DEADLOCK)) continue;
      throw error;
    } finally {
      client.release(broken);
    }
  }
}
