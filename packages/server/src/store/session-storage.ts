// Browser sessions as the session middleware asks for them: by the digest of the session id (the id in the cookie
// is a bearer credential and is never stored), with an expiry in epoch milliseconds. Two implementations: the file
// store's `sessions` collection, and PostgreSQL's `sessions` table, shared by every instance on the database.
import type pg from 'pg';
import type { Store } from './file-store.js';
import type { SessionStorage, StoredSession } from '../domain/storage/index.js';

/** The file store keeps times in whole seconds; a session may outlive its expiry by less than one. */
const toSeconds = (ms: number) => Math.ceil(ms / 1000);

export function fileSessionStorage(store: Store): SessionStorage {
  return {
    async find(sidDigest, nowMs) {
      const record = store.lookup('sessions', 'sid_digest', sidDigest);
      // A copy: the caller changes the object it gets, and records change only inside `commit`.
      return record && record.expires_at * 1000 > nowMs ? (structuredClone(record.session) as StoredSession) : null;
    },
    save(sidDigest, session, expiresMs) {
      return store.commit(() => {
        const record = store.lookup('sessions', 'sid_digest', sidDigest);
        if (record) store.update('sessions', record, { session, expires_at: toSeconds(expiresMs) });
        else store.insert('sessions', { sid_digest: sidDigest, session, expires_at: toSeconds(expiresMs) });
      });
    },
    async refresh(sidDigest, cookie, expiresMs) {
      if (!store.lookup('sessions', 'sid_digest', sidDigest)) return;
      await store.commit(() => {
        // Looked up again inside the commit: the session may have ended meanwhile.
        const record = store.lookup('sessions', 'sid_digest', sidDigest);
        if (record) store.update('sessions', record, { session: { ...record.session, cookie }, expires_at: toSeconds(expiresMs) });
      });
    },
    remove(sidDigest) {
      return store.commit(() => {
        store.remove('sessions', (s) => s.sid_digest === sidDigest);
      });
    },
  };
}

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
  };
}
