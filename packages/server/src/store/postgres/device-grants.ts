// Device authorizations (domain/storage/device-grants.ts) on PostgreSQL, where several instances may race to answer
// one or to redeem it: each step reads the row FOR UPDATE in a transaction, so whoever comes second waits and then
// sees the first one's result, and the writes are conditional on the row still being unanswered or unredeemed.
import type pg from 'pg';
import {
  refusal,
  type DeviceAnswer,
  type DeviceAnswerOutcome,
  type DeviceGrantRecord,
  type DeviceGrantStorage,
  type DevicePollOutcome,
  type DevicePollStep,
  type NewTokenPair,
  type Scope,
  type StoredDeviceGrant,
} from '../../domain/storage/index.js';
import { spendForPair, standing } from './grants.js';
import { refusingTaken } from './refusals.js';
import { at, type Bigint, epoch, type Timestamp } from './rows.js';
import { transaction } from './transaction.js';
import type { Writes } from './writes.js';

interface DeviceGrantRow {
  id: string;
  device_code_digest: string;
  user_code_digest: string;
  application_id: Bigint;
  scopes: Scope[];
  created_at: Timestamp;
  expires_at: Timestamp;
  interval: number;
  last_polled_at: Timestamp | null;
  decision: DeviceGrantRecord['decision'];
  user_id: Bigint | null;
  decided_at: Timestamp | null;
  auth_time: Timestamp | null;
  redeemed_at: Timestamp | null;
}

const columns = 'id, device_code_digest, user_code_digest, application_id, scopes, created_at, expires_at, interval, last_polled_at, decision, user_id, decided_at, auth_time, redeemed_at';
const orNull = <T, R>(value: T | null, convert: (value: T) => R): R | null => (value === null ? null : convert(value));

const recordOf = (row: DeviceGrantRow): DeviceGrantRecord => ({
  id: row.id,
  device_code_digest: row.device_code_digest,
  user_code_digest: row.user_code_digest,
  application_id: Number(row.application_id),
  scopes: row.scopes,
  created_at: epoch(row.created_at),
  expires_at: epoch(row.expires_at),
  interval: row.interval,
  last_polled_at: orNull(row.last_polled_at, epoch),
  decision: row.decision,
  user_id: orNull(row.user_id, Number),
  decided_at: orNull(row.decided_at, epoch),
  auth_time: orNull(row.auth_time, epoch),
  redeemed_at: orNull(row.redeemed_at, epoch),
});

/** Either digest taken: the user code is the one that can collide (device codes carry 256 random bits). */
const taken = { device_grants_user_code_digest_key: refusal.userCode, device_grants_device_code_digest_key: refusal.userCode };

export function postgresDeviceGrantStorage(pool: pg.Pool, { write, observed }: Writes): DeviceGrantStorage {
  const inTransaction = <T>(work: (client: pg.PoolClient) => Promise<T>) => observed(() => transaction(pool, work));
  const lockedByDigest = async (client: pg.PoolClient, field: 'user_code_digest' | 'device_code_digest', value: string) =>
    (await client.query<DeviceGrantRow>(`SELECT ${columns} FROM device_grants WHERE ${field} = $1 FOR UPDATE`, [value])).rows[0];

  return {
    async create(grant) {
      await refusingTaken(
        write(
          `INSERT INTO device_grants (${columns}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
          [
            grant.id,
            grant.device_code_digest,
            grant.user_code_digest,
            grant.application_id,
            [...grant.scopes],
            at(grant.created_at),
            at(grant.expires_at),
            grant.interval,
            orNull(grant.last_polled_at, at),
            grant.decision,
            grant.user_id,
            orNull(grant.decided_at, at),
            orNull(grant.auth_time, at),
            orNull(grant.redeemed_at, at),
          ],
        ),
        taken,
      );
    },
    async pendingCount(applicationId, now) {
      const { rows } = await pool.query<{ count: number }>('SELECT count(*)::int AS count FROM device_grants WHERE application_id = $1 AND decision IS NULL AND expires_at > $2', [applicationId, at(now)]);
      return rows[0]!.count;
    },
    async byUserCode(userCodeDigest) {
      const { rows } = await pool.query<DeviceGrantRow>(`SELECT ${columns} FROM device_grants WHERE user_code_digest = $1`, [userCodeDigest]);
      return rows[0] && recordOf(rows[0]);
    },
    answer<E>(userCodeDigest: string, check: (grant: DeviceGrantRecord) => E | undefined, answer: DeviceAnswer, now: number) {
      return inTransaction(async (client): Promise<DeviceAnswerOutcome<E>> => {
        const row = await lockedByDigest(client, 'user_code_digest', userCodeDigest);
        if (!row) return { outcome: 'unknown' };
        const reason = check(recordOf(row));
        if (reason !== undefined) return { outcome: 'refused', reason };
        // Locked FOR UPDATE since the read, so the condition holds; it stays as the rule's last line of defence.
        const { rows } = await client.query<DeviceGrantRow>(
          `UPDATE device_grants SET decision = $2, user_id = $3, auth_time = $4, decided_at = $5 WHERE id = $1 AND decision IS NULL RETURNING ${columns}`,
          [row.id, answer.decision, answer.user_id, orNull(answer.auth_time, at), at(now)],
        );
        return rows[0] ? { outcome: 'answered', grant: recordOf(rows[0]) } : { outcome: 'unknown' };
      });
    },
    poll<E>(deviceCodeDigest: string, applicationId: number, judge: (grant: StoredDeviceGrant) => DevicePollStep<E>, pair: (grant: StoredDeviceGrant) => NewTokenPair, now: number) {
      return inTransaction(async (client): Promise<DevicePollOutcome<E>> => {
        const row = await lockedByDigest(client, 'device_code_digest', deviceCodeDigest);
        if (!row || Number(row.application_id) !== applicationId || row.redeemed_at !== null) return { outcome: 'unknown' };
        const stored: StoredDeviceGrant = { ...recordOf(row), user: row.user_id === null ? undefined : await standing(client, String(row.user_id)) };
        const step = judge(stored);
        if (step.step === 'refuse') return { outcome: 'refused', reason: step.reason };
        if (step.step === 'wait') {
          await client.query('UPDATE device_grants SET last_polled_at = $2 WHERE id = $1', [row.id, at(now)]);
          return { outcome: 'refused', reason: step.reason };
        }
        // The pair starts a chain named by the device authorization, as a code's pair is by the code; it goes in only
        // if this poll spent the device code.
        const spent = await spendForPair(client, 'UPDATE device_grants SET redeemed_at = $11 WHERE id = $10 AND redeemed_at IS NULL', [row.id, now], pair(stored), row.id);
        return spent ? { outcome: 'issued' } : { outcome: 'unknown' };
      });
    },
  };
}
