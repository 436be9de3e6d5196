// OAuth token pairs (domain/storage/tokens.ts) on PostgreSQL: every API call finds its access token with the user's
// account in one batched statement (credentials.ts), and introspection and revocation find a pair by either digest in
// batched lookups (lookups.ts). Revoking pairs runs its UPDATE twice (revokeTwice), so that no pair a rotation or
// redemption in flight adds outlives the revocation.
import type pg from 'pg';
import type { AccessTokenRecord, NewTokenPair, Scope, TokenStorage } from '../../domain/storage/index.js';
import { credentialWithAccount } from './credentials.js';
import { byText } from './lookups.js';
import { at, atOrNull, type Bigint, epoch, isId, isText, type Timestamp } from './rows.js';
import type { Writes } from './writes.js';

interface AccessTokenRow {
  id: string;
  token_digest: string;
  refresh_digest: string | null;
  application_id: Bigint | null;
  user_id: Bigint;
  scopes: Scope[];
  created_at: Timestamp;
  expires_in: number;
  revoked_at: Timestamp | null;
  code_id: string | null;
  auth_time: Timestamp | null;
}
const accessTokenColumns = 'id, token_digest, refresh_digest, application_id, user_id, scopes, created_at, expires_in, revoked_at, code_id, auth_time';
const accessTokenOf = (row: AccessTokenRow): AccessTokenRecord => ({
  id: row.id,
  token_digest: row.token_digest,
  refresh_digest: row.refresh_digest,
  application_id: row.application_id === null ? null : Number(row.application_id),
  user_id: Number(row.user_id),
  scopes: row.scopes,
  created_at: epoch(row.created_at),
  expires_in: row.expires_in,
  revoked_at: row.revoked_at === null ? null : epoch(row.revoked_at),
  code_id: row.code_id,
  auth_time: row.auth_time === null ? null : epoch(row.auth_time),
});

/**
 * Runs a revoking UPDATE twice; answers how many pairs it revoked. A refresh rotation or code redemption still in
 * flight when the first pass ran holds the row it replaces, so the first pass waits for it and then skips that row
 * (revoked by now); the pair it added is visible only to a statement that starts after it committed: the second.
 */
export async function revokeTwice(client: pg.PoolClient, sql: string, values: unknown[]): Promise<number> {
  const first = await client.query(sql, values);
  const second = await client.query(sql, values);
  return (first.rowCount ?? 0) + (second.rowCount ?? 0);
}

export function postgresTokenStorage(pool: pg.Pool, { inTransaction, write }: Writes): TokenStorage {
  return {
    async issue(pair: NewTokenPair) {
      await write(
        `INSERT INTO access_tokens (id, token_digest, refresh_digest, application_id, user_id, scopes, created_at, expires_in, code_id, auth_time)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, $9)`,
        [pair.id, pair.token_digest, pair.refresh_digest, pair.application_id, pair.user_id, [...pair.scopes], at(pair.now), pair.ttl, atOrNull(pair.auth_time)],
      );
    },
    withUserByAccessDigest: credentialWithAccount(pool, 'access_tokens', accessTokenOf),
    byAccessDigest: byText(pool, accessTokenColumns, 'access_tokens', 'token_digest', accessTokenOf),
    byRefreshDigest: byText(pool, accessTokenColumns, 'access_tokens', 'refresh_digest', accessTokenOf),
    async revoke(id, now) {
      if (!isText(id)) return;
      await write('UPDATE access_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [id, at(now)]);
    },
    async unrevokedOfUser(userId) {
      if (!isId(userId)) return [];
      // Pair ids are random, so the order of issue is the issue time (a tie within one second is broken by id).
      const { rows } = await pool.query<AccessTokenRow>(`SELECT ${accessTokenColumns} FROM access_tokens WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at, id`, [userId]);
      return rows.map(accessTokenOf);
    },
    async revokeAuthorization(userId, applicationId, now) {
      if (!isId(userId) || (applicationId !== null && !isId(applicationId))) return false;
      return inTransaction(async (client) => {
        // Codes first: deleting one waits for a redemption of it in flight, whose pair the revocation then sees.
        const codes = await client.query<{ pending: boolean }>(
          'DELETE FROM authorization_codes WHERE user_id = $1 AND application_id = $2 RETURNING used_at IS NULL AND expires_at > $3 AS pending',
          [userId, applicationId, at(now)],
        );
        // The same for the device authorizations the user approved that no poll has redeemed.
        const devices = await client.query<{ pending: boolean }>(
          `DELETE FROM device_grants WHERE user_id = $1 AND application_id = $2 AND decision = 'approved' AND redeemed_at IS NULL RETURNING expires_at > $3 AS pending`,
          [userId, applicationId, at(now)],
        );
        const revoked = await revokeTwice(
          client,
          'UPDATE access_tokens SET revoked_at = $3 WHERE user_id = $1 AND application_id IS NOT DISTINCT FROM $2::bigint AND revoked_at IS NULL',
          [userId, applicationId, at(now)],
        );
        return revoked > 0 || codes.rows.some((code) => code.pending) || devices.rows.some((device) => device.pending);
      });
    },
  };
}
