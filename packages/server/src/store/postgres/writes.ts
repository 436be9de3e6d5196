// The store's writes, timed for the store write latency metric: the observer is the store's one (maintenance's
// observeWrites sets it), so postgresStorage makes one Writes and every aggregate writes through it.
import type pg from 'pg';
import { transaction } from './transaction.js';

export interface Writes {
  /** A write, timed for the store write latency metric when it succeeds. */
  observed<T>(write: () => Promise<T>): Promise<T>;
  /** A transaction (transaction.ts), timed as one write. */
  inTransaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /** One writing statement, timed. */
  write<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, values: unknown[]): Promise<pg.QueryResult<R>>;
  /** Tells `observer` how long each write took, in seconds, from now on. */
  observe(observer: (seconds: number) => void): void;
}

export function timedWrites(pool: pg.Pool): Writes {
  let observer: ((seconds: number) => void) | null = null;

  async function observed<T>(write: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const result = await write();
    observer?.((performance.now() - started) / 1000);
    return result;
  }
  return {
    observed,
    inTransaction: <T>(work: (client: pg.PoolClient) => Promise<T>) => observed(() => transaction(pool, work)),
    write: <R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, values: unknown[]) => observed(() => pool.query<R>(sql, values)),
    observe(observe) {
      observer = observe;
    },
  };
}
