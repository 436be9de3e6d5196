// Instance-wide state and chores on PostgreSQL, shared by every instance on the database: the secrets made at first
// start (the session cookie's signing key), and pruning what has expired, by one instance at a time; with readiness,
// seeding (seeding.ts), the write observer and closing, the store's maintenance (domain/storage/maintenance.ts).
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { limits } from '../../config.js';
import type { MaintenanceStorage, PruneResult } from '../../domain/storage/index.js';
import { applySeed, existingNames } from './seeding.js';
import type { Writes } from './writes.js';

/**
 * The named secret, made by whichever instance asks first; every instance then reads the same value. Two statements,
 * not one: in READ COMMITTED a single statement's snapshot could miss a row another instance committed meanwhile.
 */
export async function instanceSecret(pool: pg.Pool, name: string): Promise<string> {
  await pool.query('INSERT INTO instance_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [name, randomBytes(32).toString('base64url')]);
  const { rows } = await pool.query<{ value: string }>('SELECT value FROM instance_secrets WHERE name = $1', [name]);
  return rows[0]!.value;
}

/** The advisory lock that makes pruning one instance's job at a time (an arbitrary constant of tokenbell's). */
export const pruneLock = 0x7_0b_e1_1;

/**
 * Drops what can no longer be used, as the file store's prune does: authorization codes and device authorizations past
 * expiry, and tokens past revocation or (without a refresh token) expiry, each by more than the grace
 * (`limits.pruneGraceSeconds`); expired sessions. Answers null, doing nothing, while another instance is pruning.
 */
export async function pruneExpired(pool: pg.Pool, nowSeconds: number): Promise<PruneResult | null> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [pruneLock]);
    if (!rows[0]!.locked) {
      await client.query('ROLLBACK');
      return null;
    }
    const cutoff = new Date((nowSeconds - limits.pruneGraceSeconds) * 1000);
    const codes = await client.query('DELETE FROM authorization_codes WHERE expires_at < $1', [cutoff]);
    const devices = await client.query('DELETE FROM device_grants WHERE CASE WHEN decision IS NULL THEN expires_at <= $2 ELSE expires_at < $1 END', [cutoff, new Date(nowSeconds * 1000)]);
    const tokens = await client.query(
      `DELETE FROM access_tokens WHERE CASE WHEN revoked_at IS NOT NULL THEN revoked_at < $1
         ELSE refresh_digest IS NULL AND created_at + make_interval(secs => expires_in) < $1 END`,
      [cutoff],
    );
    const sessions = await client.query('DELETE FROM sessions WHERE expires_at <= $1', [new Date(nowSeconds * 1000)]);
    const mailCutoff = new Date((nowSeconds - limits.mailRetentionSeconds) * 1000);
    const messages = await client.query(`DELETE FROM outbox_messages WHERE status <> 'queued' AND created_at < $1`, [mailCutoff]);
    await client.query('DELETE FROM notification_events e WHERE created_at < $1 AND NOT EXISTS (SELECT 1 FROM outbox_messages m WHERE m.event_id = e.id)', [mailCutoff]);
    await client.query('COMMIT');
    return { authorizationCodes: codes.rowCount ?? 0, deviceGrants: devices.rowCount ?? 0, accessTokens: tokens.rowCount ?? 0, sessions: sessions.rowCount ?? 0, notificationMessages: messages.rowCount ?? 0 };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** An error's message without what a connection string may carry before its host (a user name and a password). */
const withoutCredentials = (message: string) => message.replace(/\/\/[^\s/@]*@/g, '//');

/** The store's maintenance; `describe` is what the listening line says the data lives in. */
export function postgresMaintenanceStorage(pool: pg.Pool, { inTransaction, observe }: Writes, describe: string): MaintenanceStorage {
  let closing: Promise<void> | undefined;
  return {
    instanceSecret(name) {
      return instanceSecret(pool, name);
    },
    prune(now) {
      return pruneExpired(pool, now);
    },
    async readiness() {
      if (closing) return { ready: false, problem: 'the store is closed' };
      try {
        // A standby, or a database whose transactions are read-only by default, answers but takes no writes.
        const { rows } = await pool.query<{ writable: boolean }>(`SELECT current_setting('transaction_read_only') = 'off' AS writable`);
        return rows[0]!.writable ? { ready: true } : { ready: false, problem: 'the database takes no writes (it is read-only)' };
      } catch (error) {
        return { ready: false, problem: `the database cannot be reached: ${withoutCredentials((error as Error).message)}` };
      }
    },
    existingNames(query) {
      return existingNames(pool, query);
    },
    async applySeed(rows) {
      await inTransaction((client) => applySeed(client, rows));
    },
    async snapshot() {
      return null;
    },
    async restore() {
      throw new Error('a store on PostgreSQL cannot restore a snapshot: every instance on the database shares its state');
    },
    observeWrites(observer) {
      observe(observer);
    },
    poolUsage() {
      return { inUse: pool.totalCount - pool.idleCount, idle: pool.idleCount, waiting: pool.waitingCount };
    },
    close() {
      // Idempotent, as the file store's: ending a pool twice is an error.
      closing ??= pool.end();
      return closing;
    },
    describe() {
      return describe;
    },
  };
}
