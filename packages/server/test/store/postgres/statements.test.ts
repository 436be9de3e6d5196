// The asks of a batched lookup as a VALUES list (store/postgres/statements.ts): few shapes, so few prepared statements.
import { expect, it } from 'vitest';
import { askedRows } from '../../../src/store/postgres/statements.js';

it('lists the asks as typed rows, padded with null rows to a power of two', () => {
  expect(askedRows(1, ['key'], ['text'])).toEqual({ sql: '(VALUES ($1::text)) AS q(key)', padding: 0 });
  expect(askedRows(3, ['key', 'id'], ['text', 'bigint'])).toEqual({
    sql: '(VALUES ($1::text, $2::bigint), ($3::text, $4::bigint), ($5::text, $6::bigint), ($7::text, $8::bigint)) AS q(key, id)',
    padding: 2,
  });
  const shapes = new Set(Array.from({ length: 32 }, (_, i) => askedRows(i + 1, ['key'], ['text']).sql));
  expect(shapes.size).toBe(6);
});
