// Reads by key, as named statements (statements.ts): one row at a time, or batched (batch.ts), the asks of one
// event-loop turn in one statement. Each batched lookup is its own batch: it is made once per store, in the aggregate
// that asks it.
import type pg from 'pg';
import { type Ask, batched } from './batch.js';
import { isId, isText } from './rows.js';
import { askedRows, largestBatch, statement } from './statements.js';

/** The first row `sql` reads, converted; undefined when there is none. */
export async function one<R extends pg.QueryResultRow, T>(pool: pg.Pool, sql: string, values: unknown[], convert: (row: R) => T): Promise<T | undefined> {
  const { rows } = await pool.query<R>(statement(sql, values));
  return rows[0] && convert(rows[0]);
}

/**
 * What `select` reads from `from` where `where` holds, for each ask of the rows `q` (askedRows) on its own: LATERAL,
 * kept from merging into a join by OFFSET 0, so each ask is an index lookup whatever the batch's size.
 */
export const eachAsk = (select: string, from: string, where: string) => (asked: string) =>
  `SELECT q.key, f.* FROM ${asked} CROSS JOIN LATERAL (SELECT ${select} FROM ${from} WHERE ${where} OFFSET 0) f`;

/**
 * Batched lookups (batch.ts): `sql` reads the asks from the rows `q` whose `columns` (of `types`) `values` gives for
 * each ask (askedRows), in statements of at most `largestBatch` asks.
 */
export function lookup<A extends Ask, R extends Ask>(
  pool: pg.Pool,
  sql: (asked: string) => string,
  columns: readonly string[],
  types: readonly string[],
  values: (ask: A) => unknown[],
) {
  // The statement for each number of asks, built once rather than per batch.
  const shapes = new Map<number, { text: string; padding: number }>();
  const read = async (asks: A[]) => {
    let shape = shapes.get(asks.length);
    if (!shape) {
      const { sql: asked, padding } = askedRows(asks.length, columns, types);
      shapes.set(asks.length, (shape = { text: sql(asked), padding }));
    }
    return (await pool.query<R>(statement(shape.text, [...asks.flatMap(values), ...Array(shape.padding).fill(null)]))).rows;
  };
  return batched<A, R>(async (asks) => {
    const chunks = Array.from({ length: Math.ceil(asks.length / largestBatch) }, (_, i) => asks.slice(i * largestBatch, (i + 1) * largestBatch));
    return (await Promise.all(chunks.map(read))).flat();
  });
}

// Every token request authenticates its client; introspection and revocation find a token, its user and its
// application: these are asked many at a time.

/** The record of `from` with this id, `select` read and `convert`ed, by a batched lookup. */
export function byId<R, T>(pool: pg.Pool, select: string, from: string, convert: (row: R) => T) {
  const find = lookup<Ask & { id: number }, R & Ask>(pool, eachAsk(select, from, `${from}.id = q.id`), ['key', 'id'], ['text', 'bigint'], (ask) => [ask.key, ask.id]);
  return async (id: number): Promise<T | undefined> => {
    if (!isId(id)) return undefined;
    const row = await find({ key: String(id), id });
    return row && convert(row);
  };
}

/** The record of `from` whose `column` is this text, `select` read and `convert`ed, by a batched lookup. */
export function byText<R, T>(pool: pg.Pool, select: string, from: string, column: string, convert: (row: R) => T) {
  return byKey(lookup<Ask, R & Ask>(pool, eachAsk(select, from, `${from}.${column} = q.key`), ['key'], ['text'], (ask) => [ask.key]), convert);
}

/** `find`'s row for the key, `convert`ed; a key no row can have (isText) is not asked. */
export function byKey<R, T>(find: (ask: Ask) => Promise<R | undefined>, convert: (row: R) => T) {
  return async (key: string): Promise<T | undefined> => {
    if (!isText(key)) return undefined;
    const row = await find({ key });
    return row && convert(row);
  };
}
