// What PostgreSQL's storage sends: lookups asked in one turn go as one statement of at most 32 asks (its answers are
// the storage contract's, test/store/*.test.ts); this counts the statements.
import { afterEach, expect, inject, it } from 'vitest';
import { postgresStorage } from '../../../src/store/postgres/storage.js';
import { migratedDatabase, recordStatements } from '../../../../../test/support/postgres.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

it('looks up the tokens asked in one turn in one statement per 32, and those of the next turn in another', async () => {
  const { pools, close } = await migratedDatabase(inject('postgresUrl'), 1);
  cleanups.push(close);
  const pool = pools[0]!;
  await pool.query(`INSERT INTO users (id, username, email, name, password_hash) SELECT i, 'user' || i, 'user' || i || '@example.com', 'U', 'x' FROM generate_series(1, 40) AS i`);
  await pool.query(`INSERT INTO access_tokens (id, token_digest, user_id, scopes, created_at, expires_in) SELECT 't' || i, 'digest-' || i, i, '{api}', now(), 7200 FROM generate_series(1, 40) AS i`);
  const storage = postgresStorage(pool);
  const sent = recordStatements(pool);

  const found = await Promise.all(Array.from({ length: 40 }, (_, i) => storage.tokens.withUserByAccessDigest(`digest-${i + 1}`)));
  expect(found.map((account) => account?.user.username)).toEqual(Array.from({ length: 40 }, (_, i) => `user${i + 1}`));
  expect(sent).toHaveLength(2);
  expect(await storage.tokens.withUserByAccessDigest('digest-3')).toMatchObject({ user: { username: 'user3' } });
  expect(sent).toHaveLength(3);
});
