// A user's notification settings (global, per group, per project) as the API asks for them: one setting by its key,
// and an atomic change that reads the stored version, applies the request to it and writes the result, answering
// the version written, so each PUT echoes its own write and concurrent PUTs never lose one another's fields.
import type pg from 'pg';
import type { Store } from './file-store.js';
import { statement } from './postgres/statements.js';
import { notificationSettingKey } from './indexes.js';
import type { NotificationSettingRecord } from './schema.js';

export type SettingKey = Pick<NotificationSettingRecord, 'user_id' | 'source_type' | 'source_id'>;

export interface NotificationSettingsStorage {
  find(key: SettingKey): Promise<NotificationSettingRecord | undefined>;
  /**
   * Applies `change` to the stored setting, or to `fresh` when there is none, and stores the result; answers the
   * version written.
   */
  change(key: SettingKey, fresh: NotificationSettingRecord, change: (current: NotificationSettingRecord) => Partial<NotificationSettingRecord>): Promise<NotificationSettingRecord>;
}

export function fileNotificationSettingsStorage(store: Store): NotificationSettingsStorage {
  const findSetting = (userId: number, type: SettingKey['source_type'], id: number | null) => store.lookup('notification_settings', 'key', notificationSettingKey(userId, type, id));
  return {
    async find({ user_id, source_type, source_id }) {
      return findSetting(user_id, source_type, source_id);
    },
    change({ user_id, source_type, source_id }, fresh, change) {
      // One synchronous commit callback: read, change and write are never interleaved with another request's.
      return store.commit(() => {
        const existing = findSetting(user_id, source_type, source_id);
        const changes = change(existing ?? fresh);
        return existing ? store.update('notification_settings', existing, changes) : store.insert('notification_settings', { ...fresh, ...changes });
      });
    },
  };
}

/** A notification_settings row as pg reads it (bigint ids as text). */
export interface SettingRow {
  user_id: string;
  source_type: NotificationSettingRecord['source_type'];
  source_id: string | null;
  level: NotificationSettingRecord['level'];
  notification_email: string | null;
  events: NotificationSettingRecord['events'];
}

export const settingOf = (row: SettingRow): NotificationSettingRecord => ({
  user_id: Number(row.user_id),
  source_type: row.source_type,
  source_id: row.source_id === null ? null : Number(row.source_id),
  level: row.level,
  notification_email: row.notification_email,
  events: row.events,
});

const selectOne = `SELECT user_id, source_type, source_id, level, notification_email, events FROM notification_settings
  WHERE user_id = $1 AND source_type = $2 AND coalesce(source_id, 0) = coalesce($3::bigint, 0)`;

export function postgresNotificationSettingsStorage(pool: pg.Pool): NotificationSettingsStorage {
  return {
    async find({ user_id, source_type, source_id }) {
      const { rows } = await pool.query<SettingRow>(statement(selectOne, [user_id, source_type, source_id]));
      return rows[0] ? settingOf(rows[0]) : undefined;
    },
    async change(key, fresh, change) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        // One statement makes the row exist and locks it, answering the stored version: a concurrent first write
        // waits here for this one, then finds it. (The no-op update is what locks and returns an existing row.)
        const { rows } = await client.query<SettingRow>(
          statement(
            `INSERT INTO notification_settings AS s (user_id, source_type, source_id, level, notification_email, events) VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (user_id, source_type, coalesce(source_id, 0)) DO UPDATE SET level = s.level
             RETURNING s.user_id, s.source_type, s.source_id, s.level, s.notification_email, s.events`,
            [fresh.user_id, fresh.source_type, fresh.source_id, fresh.level, fresh.notification_email, JSON.stringify(fresh.events)],
          ),
        );
        const current = settingOf(rows[0]!);
        const next = { ...current, ...change(current) };
        await client.query(
          statement(
            `UPDATE notification_settings SET level = $4, notification_email = $5, events = $6
             WHERE user_id = $1 AND source_type = $2 AND coalesce(source_id, 0) = coalesce($3::bigint, 0)`,
            [key.user_id, key.source_type, key.source_id, next.level, next.notification_email, JSON.stringify(next.events)],
          ),
        );
        await client.query('COMMIT');
        return next;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
  };
}
