// Instance secrets and pruning on PostgreSQL: one secret for all instances however many ask at once, and pruning
// by the file store's rules, by one instance at a time.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { instanceSecret, pruneExpired, pruneLock } from '../../../src/store/postgres/maintenance.js';
import { migratedDatabase } from '../../../../../test/support/postgres.js';

let pool: pg.Pool;
let close: (() => Promise<void>) | undefined;
beforeAll(async () => {
  const database = await migratedDatabase(inject('postgresUrl'));
  [pool] = database.pools as [pg.Pool];
  close = database.close;
});
afterAll(async () => {
  await close?.();
});

describe('instanceSecret', () => {
  it('gives every instance the same secret, made once, even when they all ask at the same moment', async () => {
    const values = await Promise.all(Array.from({ length: 10 }, () => instanceSecret(pool, 'session_key')));
    expect(new Set(values).size).toBe(1);
    expect(values[0]).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await instanceSecret(pool, 'session_key')).toBe(values[0]);
    expect(await instanceSecret(pool, 'another')).not.toBe(values[0]);
  });
});

describe('pruneExpired', () => {
  const now = Math.floor(Date.UTC(2026, 10, 25, 12) / 1000);
  const at = (seconds: number) => new Date(seconds * 1000);
  const day = 86_400;

  it('drops what the file store drops, and keeps the rest', async () => {
    await pool.query(`INSERT INTO users (id, username, email, name, password_hash) VALUES (1, 'jsmith', 'j@example.com', 'J', 'x')`);
    await pool.query(`INSERT INTO applications (id, uid, secret_digest, name, redirect_uris, scopes, owner_id) VALUES (1, 'app', 'd', 'A', '{}', '{api}', 1)`);
    const code = (id: string, expires: number) =>
      pool.query(`INSERT INTO authorization_codes (id, code_digest, application_id, user_id, redirect_uri, scopes, created_at, expires_at) VALUES ($1, $1, 1, 1, 'x', '{api}', $2, $3)`, [id, at(expires - 600), at(expires)]);
    await code('old-code', now - day - 1);
    await code('recent-code', now - day + 60);
    const token = (id: string, created: number, refresh: string | null, revoked: number | null) =>
      pool.query(
        `INSERT INTO access_tokens (id, token_digest, refresh_digest, application_id, user_id, scopes, created_at, expires_in, revoked_at) VALUES ($1, $1, $2, 1, 1, '{api}', $3, 7200, $4)`,
        [id, refresh, at(created), revoked === null ? null : at(revoked)],
      );
    await token('expired-without-refresh', now - day - 7201, null, null);
    await token('expired-with-refresh', now - day - 7201, 'r1', null);
    await token('revoked-long-ago', now - 3 * day, 'r2', now - day - 1);
    await token('revoked-recently', now - 3 * day, 'r3', now - 60);
    await pool.query(`INSERT INTO sessions (sid_digest, session, expires_at) VALUES ('gone', '{}', $1), ('live', '{}', $2)`, [at(now), at(now + 1)]);

    expect(await pruneExpired(pool, now)).toEqual({ authorizationCodes: 1, deviceGrants: 0, accessTokens: 2, sessions: 1, notificationMessages: 0 });
    expect((await pool.query('SELECT id FROM authorization_codes')).rows).toEqual([{ id: 'recent-code' }]);
    expect((await pool.query('SELECT id FROM access_tokens ORDER BY id')).rows).toEqual([{ id: 'expired-with-refresh' }, { id: 'revoked-recently' }]);
    expect((await pool.query('SELECT sid_digest FROM sessions')).rows).toEqual([{ sid_digest: 'live' }]);
  });

  it('does nothing while another instance prunes', async () => {
    const other = await pool.connect();
    try {
      await other.query('SELECT pg_advisory_lock($1)', [pruneLock]);
      expect(await pruneExpired(pool, now)).toBeNull();
      await other.query('SELECT pg_advisory_unlock($1)', [pruneLock]);
      expect(await pruneExpired(pool, now)).toEqual({ authorizationCodes: 0, deviceGrants: 0, accessTokens: 0, sessions: 0, notificationMessages: 0 });
    } finally {
      other.release();
    }
  });
});
