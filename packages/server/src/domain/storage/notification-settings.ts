// A user's notification settings (global, per group, per project) as the API asks for them: one setting by its key,
// and an atomic change that applies a PUT to the stored version and answers the version written, so each PUT echoes
// its own write and concurrent PUTs never lose one another's fields.
import type { NotificationEvents, NotificationSettingRecord } from './records.js';

/** The composite key of a notification setting; `source_id` is null for the global setting. */
export function notificationSettingKey(
  userId: number,
  sourceType: NotificationSettingRecord['source_type'],
  sourceId: number | null,
): string {
  return `${userId}:${sourceType}:${sourceId ?? ''}`;
}

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

/** The patch applied to a record; PostgreSQL's upsert (store/postgres/notification-settings.ts) applies the same rule in SQL. */
export function patched(record: NotificationSettingRecord, patch: SettingPatch): NotificationSettingRecord {
  return {
    ...record,
    level: patch.level ?? record.level,
    notification_email: patch.notification_email !== undefined ? patch.notification_email : record.notification_email,
    events: { ...record.events, ...patch.events },
  };
}
