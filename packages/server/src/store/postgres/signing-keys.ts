// The id_token signing keys (domain/storage/signing-keys.ts) in PostgreSQL's `signing_keys` table, shared by every
// instance on the database. A partial unique index lets one row at most be the newest (not retired), whoever writes;
// the two changes of the set also take turns under one advisory lock, so a rotation never meets a first key half added.
import type pg from 'pg';
import type { SigningKeyRecord, SigningKeyStorage } from '../../domain/storage/index.js';
import { statement } from './statements.js';
import type { Writes } from './writes.js';

/** The advisory lock the changes of the key set take in turn (an arbitrary constant of tokenbell's). */
export const signingKeysLock = 0x7_0b_e1_2;

interface SigningKeyRow {
  kid: string;
  private_key: string;
  public_jwk: SigningKeyRecord['public_jwk'];
  created_at: Date;
  signs_from: Date;
  retired_at: Date | null;
}

const columns = 'kid, private_key, public_jwk, created_at, signs_from, retired_at';
const seconds = (at: Date) => Math.floor(at.getTime() / 1000);
const at = (epochSeconds: number) => new Date(epochSeconds * 1000);

const recordOf = (row: SigningKeyRow): SigningKeyRecord => ({
  kid: row.kid,
  private_key: row.private_key,
  public_jwk: row.public_jwk,
  created_at: seconds(row.created_at),
  signs_from: seconds(row.signs_from),
  retired_at: row.retired_at === null ? null : seconds(row.retired_at),
});

export function postgresSigningKeyStorage(pool: pg.Pool, { inTransaction }: Writes): SigningKeyStorage {
  const newest = async () => {
    const { rows } = await pool.query<SigningKeyRow>(`SELECT ${columns} FROM signing_keys WHERE retired_at IS NULL`);
    return rows[0] && recordOf(rows[0]);
  };
  return {
    async kept() {
      // Every instance asks before each signature (so all follow a rotation together): a prepared statement over a
      // handful of rows.
      const { rows } = await pool.query<SigningKeyRow>(statement(`SELECT ${columns} FROM signing_keys ORDER BY signs_from DESC, kid`, []));
      return rows.map(recordOf);
    },
    async addFirst(key) {
      await inTransaction(async (client) => {
        await client.query('SELECT pg_advisory_xact_lock($1)', [signingKeysLock]);
        await client.query(
          `INSERT INTO signing_keys (kid, private_key, public_jwk, created_at, signs_from) SELECT $1, $2, $3, $4, $5
           WHERE NOT EXISTS (SELECT 1 FROM signing_keys WHERE retired_at IS NULL) ON CONFLICT DO NOTHING`,
          [key.kid, key.private_key, key.public_jwk, at(key.created_at), at(key.signs_from)],
        );
      });
      // Read after the commit, so it sees the key whichever instance added it.
      return (await newest())!;
    },
    rotate(key, cutoff) {
      return inTransaction(async (client) => {
        // Taken first: under READ COMMITTED the statements after it see what the rotation before this one committed.
        await client.query('SELECT pg_advisory_xact_lock($1)', [signingKeysLock]);
        const previous = await client.query<{ kid: string }>('SELECT kid FROM signing_keys WHERE retired_at IS NULL');
        await client.query('UPDATE signing_keys SET retired_at = $1 WHERE retired_at IS NULL OR retired_at > $1', [at(key.signs_from)]);
        await client.query('INSERT INTO signing_keys (kid, private_key, public_jwk, created_at, signs_from) VALUES ($1, $2, $3, $4, $5)', [
          key.kid,
          key.private_key,
          key.public_jwk,
          at(key.created_at),
          at(key.signs_from),
        ]);
        const dropped = await client.query<{ kid: string }>('DELETE FROM signing_keys WHERE retired_at <= $1 RETURNING kid', [at(cutoff)]);
        return { retiredKid: previous.rows[0]?.kid ?? null, droppedKids: dropped.rows.map((row) => row.kid) };
      });
    },
  };
}
