// Reading and changing a user's notification settings (spec 2.3-2.5, 4.4-4.5). The parameters arrive already
// validated against the document; this module applies them and shapes the answers.
import type { components } from '@tokenbell/sdk';
import { notificationEvents } from '../openapi/document.js';
import { DEFAULT_GLOBAL_LEVEL, findSetting, noEvents, notificationEmailOf } from './notification-levels.js';
import type { Store } from '../store/file-store.js';
import type { NotificationEvents, NotificationSettingRecord, UserRecord } from '../store/schema.js';

type Schemas = components['schemas'];
export type SourceType = 'group' | 'project';
export type GlobalSettingsParams = Schemas['GlobalNotificationSettingsUpdate'];
export type SourceSettingsParams = Schemas['NotificationSettingsUpdate'];

/** Query strings and forms send booleans as text; the document allows both spellings. */
const toBoolean = (flag: Schemas['EventFlag']) => flag === true || flag === 'true';

function applyEvents(events: NotificationEvents, params: Partial<Record<string, unknown>>): NotificationEvents {
  const next = { ...events };
  for (const event of notificationEvents) {
    const flag = params[event] as Schemas['EventFlag'] | undefined;
    if (flag !== undefined) next[event] = toBoolean(flag);
  }
  return next;
}

/** Writes the setting (inside `commit`) and answers the version written. */
function upsert(store: Store, existing: NotificationSettingRecord | undefined, fresh: NotificationSettingRecord, changes: Partial<NotificationSettingRecord>): NotificationSettingRecord {
  return existing ? store.update('notificationSettings', existing, changes) : store.insert('notificationSettings', { ...fresh, ...changes });
}

export function presentGlobal(store: Store, user: UserRecord): Schemas['GlobalNotificationSettings'] {
  return globalAnswer(findSetting(store, user.id, 'global', null), user);
}

function globalAnswer(record: NotificationSettingRecord | undefined, user: UserRecord): Schemas['GlobalNotificationSettings'] {
  const notification_email = notificationEmailOf(record, user);
  const level = record?.level ?? DEFAULT_GLOBAL_LEVEL;
  if (level === 'custom') return { level, notification_email, events: { ...record!.events } };
  // A global setting is never `global`; the document refuses it on the way in.
  return { level: level as Exclude<typeof level, 'custom' | 'global'>, notification_email };
}

/**
 * The answer is built from the record this commit wrote, not read back after the write is durable: by then other
 * requests' commits may have changed the setting, and each PUT must show the state it left.
 */
export async function updateGlobal(store: Store, user: UserRecord, params: GlobalSettingsParams): Promise<Schemas['GlobalNotificationSettings']> {
  return store.commit(() => {
    const existing = findSetting(store, user.id, 'global', null);
    const current = existing ?? { user_id: user.id, source_type: 'global' as const, source_id: null, level: DEFAULT_GLOBAL_LEVEL, notification_email: null, events: noEvents() };
    const written = upsert(store, existing, current, {
      ...(params.level !== undefined ? { level: params.level } : {}),
      ...(params.notification_email !== undefined ? { notification_email: params.notification_email } : {}),
      events: applyEvents(current.events, params),
    });
    return globalAnswer(written, user);
  });
}

export function presentSource(store: Store, user: UserRecord, type: SourceType, sourceId: number): Schemas['NotificationSettings'] {
  return sourceAnswer(findSetting(store, user.id, type, sourceId));
}

function sourceAnswer(record: NotificationSettingRecord | undefined): Schemas['NotificationSettings'] {
  if (!record) return { level: 'global' };
  // Spec 4.5 rule 2: custom shows all twelve events; any other level shows the level only.
  if (record.level === 'custom') return { level: 'custom', events: { ...record.events } };
  return { level: record.level };
}

/** Answers from the record written, as updateGlobal does. */
export async function updateSource(store: Store, user: UserRecord, type: SourceType, sourceId: number, params: SourceSettingsParams): Promise<Schemas['NotificationSettings']> {
  return store.commit(() => {
    const existing = findSetting(store, user.id, type, sourceId);
    const current = existing ?? { user_id: user.id, source_type: type, source_id: sourceId, level: 'global' as const, notification_email: null, events: noEvents() };
    // Events sent with a non-custom level are kept, to show once the level becomes custom.
    const written = upsert(store, existing, current, {
      ...(params.level !== undefined ? { level: params.level } : {}),
      events: applyEvents(current.events, params),
    });
    return sourceAnswer(written);
  });
}
