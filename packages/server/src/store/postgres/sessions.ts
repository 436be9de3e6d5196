// Browser sessions (domain/storage/sessions.ts) in PostgreSQL's `sessions` table, shared by every instance on the
// database.
import type pg from 'pg';
import type { SessionStorage, StoredSession } from '../../domain/storage/index.js';

export function postgresSessionStorage(pool: pg.Pool): SessionStorage {
  const at = (ms: number) => new Date(ms);
  return {
    async find(sidDigest, nowMs) {
      const { rows } = await pool.query<{ session: StoredSession }>('SELECT session FROM sessions WHERE sid_digest = $1 AND expires_at > $2', [sidDigest, at(nowMs)]);
      return rows[0]?.session ?? null;
    },
    async save(sidDigest, session, expiresMs) {
      await pool.query(
        `INSERT INTO sessions (sid_digest, session, expires_at) VALUES ($1, $2, $3)
         ON CONFLICT (sid_digest) DO UPDATE SET session = EXCLUDED.session, expires_at = EXCLUDED.expires_at`,
        [sidDigest, session, at(expiresMs)],
      );
    },
    async refresh(sidDigest, cookie, expiresMs) {
      // One statement, so a concurrent save or remove is never undone by a stale read.
      await pool.query(`UPDATE sessions SET session = jsonb_set(session, '{cookie}', $2::jsonb), expires_at = $3 WHERE sid_digest = $1`, [
        sidDigest,
        JSON.stringify(cookie ?? null),
        at(expiresMs),
      ]);
    },
    async remove(sidDigest) {
      await pool.query('DELETE FROM sessions WHERE sid_digest = $1', [sidDigest]);
    },
    async endAllOf(userId) {
      const { rowCount } = await pool.query(`DELETE FROM sessions WHERE session->>'userId' = $1 OR session->'twoFactor'->>'userId' = $1`, [String(userId)]);
      return rowCount ?? 0;
    },
  };
}
