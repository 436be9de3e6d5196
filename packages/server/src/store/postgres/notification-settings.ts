// Notification settings (domain/storage/notification-settings.ts) on PostgreSQL: the changes of one event-loop turn
// share one upsert and one commit (batch.ts), each applying its PUT to the stored version in SQL.
import type pg from 'pg';
import {
  notificationSettingKey,
  patched,
  type NotificationSettingRecord,
  type NotificationSettingsStorage,
  type SettingPatch,
} from '../../domain/storage/index.js';
import { batchedWrites } from './batch.js';
import { statement } from './statements.js';

/** A notification_settings row as pg reads it (bigint ids as text), or as row_to_json writes it (as numbers). */
export interface SettingRow {
  user_id: string | number;
  source_type: NotificationSettingRecord['source_type'];
  source_id: string | number | null;
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

/**
 * Settings changed at once, one per key: the first write of a key inserts the patched defaults; a later one, or one
 * racing the first, updates the row it finds locked, with its patch applied to what is stored. One statement for the
 * whole batch (batch.ts), so one round trip and one commit however many requests it answers.
 */
const changeAll = `WITH q AS (
    SELECT * FROM json_to_recordset($1::json) AS q(key text, user_id bigint, source_type text, source_id bigint, level text, notification_email text,
      events jsonb, patch_level text, patch_sets_email boolean, patch_email text, patch_events jsonb)
  )
  INSERT INTO notification_settings AS s (user_id, source_type, source_id, level, notification_email, events)
  SELECT user_id, source_type, source_id, level, notification_email, events FROM q ORDER BY key
  ON CONFLICT (user_id, source_type, coalesce(source_id, 0)) DO UPDATE
    SET (level, notification_email, events) = (
      SELECT coalesce(q.patch_level, s.level), CASE WHEN q.patch_sets_email THEN q.patch_email ELSE s.notification_email END, s.events || q.patch_events
      FROM q WHERE q.user_id = excluded.user_id AND q.source_type = excluded.source_type AND coalesce(q.source_id, 0) = coalesce(excluded.source_id, 0))
  RETURNING (SELECT q.key FROM q WHERE q.user_id = s.user_id AND q.source_type = s.source_type AND coalesce(q.source_id, 0) = coalesce(s.source_id, 0)) AS key,
    s.user_id, s.source_type, s.source_id, s.level, s.notification_email, s.events`;

export function postgresNotificationSettingsStorage(pool: pg.Pool): NotificationSettingsStorage {
  type Change = { key: string; first: NotificationSettingRecord; patch: SettingPatch };
  const change = batchedWrites<Change, SettingRow & { key: string }>(async (changes) => {
    const asks = changes.map(({ key, first, patch }) => ({
      key,
      ...first,
      patch_level: patch.level ?? null,
      patch_sets_email: patch.notification_email !== undefined,
      patch_email: patch.notification_email ?? null,
      patch_events: patch.events,
    }));
    return (await pool.query<SettingRow & { key: string }>(statement(changeAll, [JSON.stringify(asks)]))).rows;
  });
  return {
    async find({ user_id, source_type, source_id }) {
      const { rows } = await pool.query<SettingRow>(statement(selectOne, [user_id, source_type, source_id]));
      return rows[0] ? settingOf(rows[0]) : undefined;
    },
    async change(fresh, patch) {
      const key = notificationSettingKey(fresh.user_id, fresh.source_type, fresh.source_id);
      return settingOf(await change({ key, first: patched(fresh, patch), patch }));
    },
  };
}
