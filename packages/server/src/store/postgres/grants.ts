// The token endpoint's single-use steps (domain/storage/grants.ts) on PostgreSQL, where several instances may race
// for one code or refresh token: row locks and an advisory lock per chain decide who wins.
import type pg from 'pg';
import type {
  GrantStorage,
  NewTokenPair,
  Scope,
  StoredCode,
  StoredRefresh,
  UserRecord,
  UserStanding,
} from '../../domain/storage/index.js';
import { at, atOrNull, epoch } from './rows.js';
import { transaction as inTransaction } from './transaction.js';

// FOR SHARE: blocking the user waits for this grant to finish, and a grant after the block sees it.
export const standing = async (client: pg.PoolClient, userId: string): Promise<UserStanding> =>
  (await client.query<{ state: UserRecord['state'] }>(`SELECT state FROM users WHERE id = $1 FOR SHARE`, [userId])).rows[0];
const lockChain = (client: pg.PoolClient, codeId: string) => client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 7))', [codeId]);
const revokeChain = (client: pg.PoolClient, codeId: string, now: number) =>
  client.query('UPDATE access_tokens SET revoked_at = $2 WHERE code_id = $1 AND revoked_at IS NULL', [codeId, at(now)]);
/**
 * Spends a code or a refresh token and issues the pair that replaces it, in one statement: `spend` is an UPDATE of
 * the used row (`$10` and `$11` its parameters) answering a row when it spent it, and the pair goes in only then.
 * Answers whether it did.
 */
export const spendForPair = async (client: pg.PoolClient, spend: string, spent: [string, number], pair: NewTokenPair, codeId: string | null) => {
  const { rowCount } = await client.query(
    `WITH spent AS (${spend} RETURNING 1)
     INSERT INTO access_tokens (id, token_digest, refresh_digest, application_id, user_id, scopes, created_at, expires_in, code_id, auth_time)
     SELECT $1::text, $2::text, $3::text, $4::bigint, $5::bigint, $6::text[], $7::timestamptz, $8::integer, $9::text, $12::timestamptz WHERE EXISTS (SELECT FROM spent)`,
    [pair.id, pair.token_digest, pair.refresh_digest, pair.application_id, pair.user_id, [...pair.scopes], at(pair.now), pair.ttl, codeId, spent[0], at(spent[1]), atOrNull(pair.auth_time)],
  );
  return rowCount === 1;
};

/**
 * On PostgreSQL (READ COMMITTED): the code's row is locked FOR UPDATE, and every change to a chain happens under a
 * transaction advisory lock on the chain's code id, so a replayed refresh token revoking the chain and the legitimate
 * rotation adding to it are serialised: whichever comes second sees the other's result, and nothing of the chain
 * outlives a replay. Serialization failures and deadlocks are retried.
 */
export function postgresGrantStorage(pool: pg.Pool): GrantStorage {
  const transaction = <T>(work: (client: pg.PoolClient) => Promise<T>) => inTransaction(pool, work);

  return {
    redeemCode(codeDigest, applicationId, check, pair, now) {
      return transaction(async (client) => {
        const { rows } = await client.query(
          'SELECT id, application_id, user_id, redirect_uri, scopes, code_challenge, expires_at, used_at, nonce, auth_time FROM authorization_codes WHERE code_digest = $1 FOR UPDATE',
          [codeDigest],
        );
        const row = rows[0] as { id: string; application_id: string; user_id: string; redirect_uri: string; scopes: Scope[]; code_challenge: string | null; expires_at: Date; used_at: Date | null; nonce: string | null; auth_time: Date | null } | undefined;
        if (!row || Number(row.application_id) !== applicationId) return { outcome: 'unknown' } as const;
        await lockChain(client, row.id);
        if (row.used_at !== null) {
          await revokeChain(client, row.id, now);
          return { outcome: 'replayed' } as const;
        }
        const code: StoredCode = { id: row.id, application_id: Number(row.application_id), user_id: Number(row.user_id), redirect_uri: row.redirect_uri, scopes: row.scopes, code_challenge: row.code_challenge, expires_at: epoch(row.expires_at), nonce: row.nonce, auth_time: row.auth_time === null ? null : epoch(row.auth_time), user: await standing(client, row.user_id) };
        const reason = check(code);
        if (reason !== undefined) return { outcome: 'refused', reason } as const;
        // The code's row is locked FOR UPDATE since the read above: nothing can have spent it meanwhile.
        await spendForPair(client, 'UPDATE authorization_codes SET used_at = $11 WHERE id = $10', [row.id, now], pair(code), row.id);
        return { outcome: 'issued' } as const;
      });
    },
    rotateRefresh(refreshDigest, applicationId, check, pair, now) {
      return transaction(async (client) => {
        // The token with its user's standing, the user's row held FOR SHARE as standing does.
        const read = () =>
          client.query(
            `SELECT t.id, t.application_id, t.user_id, t.scopes, t.code_id, t.revoked_at, t.auth_time, u.state AS user_state
             FROM access_tokens t JOIN users u ON u.id = t.user_id WHERE t.refresh_digest = $1 FOR SHARE OF u`,
            [refreshDigest],
          );
        let row = (await read()).rows[0] as { id: string; application_id: string | null; user_id: string; scopes: Scope[]; code_id: string | null; revoked_at: Date | null; auth_time: Date | null; user_state: UserRecord['state'] | null } | undefined;
        if (!row || row.application_id === null || Number(row.application_id) !== applicationId) return { outcome: 'unknown' } as const;
        if (row.code_id !== null) {
          // Under the chain's lock, read again: a rotation or a revocation may have committed while this waited.
          await lockChain(client, row.code_id);
          row = (await read()).rows[0] as typeof row;
        }
        if (!row) return { outcome: 'unknown' } as const;
        if (row.revoked_at !== null) {
          if (row.code_id === null) return { outcome: 'unknown' } as const;
          await revokeChain(client, row.code_id, now);
          return { outcome: 'replayed' } as const;
        }
        const previous: StoredRefresh = { id: row.id, application_id: applicationId, user_id: Number(row.user_id), scopes: row.scopes, code_id: row.code_id, auth_time: row.auth_time === null ? null : epoch(row.auth_time), user: row.user_state === null ? undefined : { state: row.user_state } };
        const reason = check(previous);
        if (reason !== undefined) return { outcome: 'refused', reason } as const;
        // Only if still unrevoked: a revocation outside the chain's lock (the user revoking the application, its
        // deletion) may have committed since the read; then this is a replay of a revoked token, and ends the chain.
        const rotated = await spendForPair(client, 'UPDATE access_tokens SET revoked_at = $11 WHERE id = $10 AND revoked_at IS NULL', [row.id, now], pair(previous), row.code_id);
        if (!rotated) {
          if (row.code_id !== null) await revokeChain(client, row.code_id, now);
          return { outcome: 'replayed' } as const;
        }
        return { outcome: 'issued' } as const;
      });
    },
  };
}
