// Notification settings (domain/storage/notification-settings.ts) on the file store.
import {
  notificationSettingKey,
  patched,
  type NotificationSettingsStorage,
  type SettingKey,
} from '../../domain/storage/index.js';
import type { Store } from './store.js';

/** A user's setting at one level, by its key; tokens and the recipients of a notification read it too. */
export const findSetting = (store: Store, userId: number, type: SettingKey['source_type'], id: number | null) =>
  store.lookup('notification_settings', 'key', notificationSettingKey(userId, type, id));

export function fileNotificationSettingsStorage(store: Store): NotificationSettingsStorage {
  return {
    async find({ user_id, source_type, source_id }) {
      return findSetting(store, user_id, source_type, source_id);
    },
    change(fresh, patch) {
      // One synchronous commit callback: read, change and write are never interleaved with another request's.
      return store.commit(() => {
        const existing = findSetting(store, fresh.user_id, fresh.source_type, fresh.source_id);
        return existing ? store.update('notification_settings', existing, patched(existing, patch)) : store.insert('notification_settings', patched(fresh, patch));
      });
    },
  };
}
