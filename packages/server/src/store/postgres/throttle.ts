// The sign-in throttle's backing on PostgreSQL: rate-limiter-flexible's PostgreSQL limiter for the counts and the
// sign_in_addresses table for the addresses each account signed in from, so every instance on the database counts
// the same attempts and trusts the same addresses. An attempt's point is taken here before its password is checked, so
// a burst spread over instances still meets one limit; which points are attempts still in flight only the process
// holding them knows (domain/login-throttle.ts).
import type pg from 'pg';
import { RateLimiterPostgres } from 'rate-limiter-flexible';
import { createHash } from 'node:crypto';
import { knownAddressesPerAccount, type ThrottleBacking } from '../../domain/storage/index.js';
import { isText } from './rows.js';

/**
 * A login is counted under its own name, and a login no row can hold (isText) must be counted too, not fail the
 * sign-in: its count goes under the login's digest instead, a key no other login's count has (theirs are the text).
 */
class TextKeyedLimiter extends RateLimiterPostgres {
  override getKey(key: string | number): string {
    return isText(String(key)) ? super.getKey(key) : super.getKey(`sha256:${createHash('sha256').update(Buffer.from(String(key), 'utf16le')).digest('hex')}`);
  }
}

export function postgresThrottleBacking(pool: pg.Pool): ThrottleBacking {
  return {
    // The table comes from the migrations, so the limiter neither creates it nor waits to.
    limiter: (options) => new TextKeyedLimiter({ ...options, storeClient: pool, storeType: 'pool', tableName: 'rate_limits', tableCreated: true }),
    addresses: {
      async wasUsedSince(userId, address, sinceMs) {
        const { rows } = await pool.query('SELECT 1 FROM sign_in_addresses WHERE user_id = $1 AND address = $2 AND seen_at >= $3', [userId, address, new Date(sinceMs)]);
        return rows.length > 0;
      },
      async remember(userId, address, atMs) {
        await pool.query(
          `WITH noted AS (
             INSERT INTO sign_in_addresses (user_id, address, seen_at) VALUES ($1, $2, $3)
             ON CONFLICT (user_id, address) DO UPDATE SET seen_at = EXCLUDED.seen_at
           )
           DELETE FROM sign_in_addresses WHERE user_id = $1 AND address <> $2 AND address NOT IN (
             SELECT address FROM sign_in_addresses WHERE user_id = $1 AND address <> $2 ORDER BY seen_at DESC LIMIT $4
           )`,
          [userId, address, new Date(atMs), knownAddressesPerAccount - 1],
        );
      },
    },
    // Every instance on the database counts here: one instance's reset must not clear the others' throttle.
    async forget() {
      return false;
    },
  };
}
