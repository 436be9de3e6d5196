// A user's notification settings (global, per group, per project) as the API asks for them: one setting by its key,
// and an atomic change that applies a PUT to the stored version and answers the version written, so each PUT echoes
// its own write and concurrent PUTs never lose one another's fields.
import type pg from 'pg';
import type { Store } from './file-store.js';
import { statement } from './postgres/statements.js';
import { notificationSettingKey } from './indexes.js';
import type { NotificationEvents, NotificationSettingRecord } from './schema.js';

export type SettingKey = Pick<NotificationSettingRecord, 'user_id' | 'source_type' | 'source_id'>;

export interface NotificationSettingsStorage {
  find(key: SettingKey): Promise<NotificationSettingRecord | undefined>;
  /**
   * Applies `change` to the stored setting, or to `fresh` when there is none, and stores the result; answers the
   * version written.
   */
  change(fresh: NotificationSettingRecord, patch: SettingPatch): Promise<NotificationSettingRecord>;
}

/**
 * What a PUT changes: the level and the e-mail address when it sends them, and the events it names; everything else
 * stays as stored. Declarative, so that a database applies it in the statement that writes (one round trip).
 */
export interface SettingPatch {
  level?: NotificationSettingRecord['level'];
  notification_email?: string | null;
  events: Partial<NotificationEvents>;
}

/** The patch applied to a record; PostgreSQL's upsert below applies the same rule in SQL. */
export function patched(record: NotificationSettingRecord, patch: SettingPatch): NotificationSettingRecord {
  return {
    ...record,
    level: patch.level ?? record.level,
    notification_email: patch.notification_email !== undefined ? patch.notification_email : record.notification_email,
    events: { ...record.events, ...patch.events },
  };
}

export function fileNotificationSettingsStorage(store: Store): NotificationSettingsStorage {
  const findSetting = (userId: number, type: SettingKey['source_type'], id: number | null) => store.lookup('notification_settings', 'key', notificationSettingKey(userId, type, id));
  return {
    async find({ user_id, source_type, source_id }) {
      return findSetting(user_id, source_type, source_id);
    },
    change(fresh, patch) {
      // One synchronous commit callback: read, change and write are never interleaved with another request's.
      return store.commit(() => {
        const existing = findSetting(fresh.user_id, fresh.source_type, fresh.source_id);
        return existing ? store.update('notification_settings', existing, patched(existing, patch)) : store.insert('notification_settings', patched(fresh, patch));
      });
    },
  };
}

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

export function postgresNotificationSettingsStorage(pool: pg.Pool): NotificationSettingsStorage {
  return {
    async find({ user_id, source_type, source_id }) {
      const { rows } = await pool.query<SettingRow>(statement(selectOne, [user_id, source_type, source_id]));
      return rows[0] ? settingOf(rows[0]) : undefined;
    },
    async change(fresh, patch) {
      const first = patched(fresh, patch);
      // One statement, so one round trip and no transaction to open: the first write inserts the patched defaults; a
      // later one, or one racing the first, updates the row it finds locked, with the patch applied to what is stored.
      const { rows } = await pool.query<SettingRow>(
        statement(
          `INSERT INTO notification_settings AS s (user_id, source_type, source_id, level, notification_email, events) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (user_id, source_type, coalesce(source_id, 0)) DO UPDATE
             SET level = coalesce($7, s.level), notification_email = CASE WHEN $8 THEN $9 ELSE s.notification_email END, events = s.events || $10::jsonb
           RETURNING s.user_id, s.source_type, s.source_id, s.level, s.notification_email, s.events`,
          [
            first.user_id,
            first.source_type,
            first.source_id,
            first.level,
            first.notification_email,
            JSON.stringify(first.events),
            patch.level ?? null,
            patch.notification_email !== undefined,
            patch.notification_email ?? null,
            JSON.stringify(patch.events),
          ],
        ),
      );
      return settingOf(rows[0]!);
    },
  };
}
