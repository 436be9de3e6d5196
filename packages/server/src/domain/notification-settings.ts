// Reading and changing a user's notification settings (spec 2.3-2.5, 4.4-4.5). The parameters arrive already
// validated against the document; this module applies them and shapes the answers.
import type { components } from '@tokenbell/sdk';
import { InputError } from '../explained-error.js';
import { notificationEvents } from '../openapi/document.js';
import { ownsEmail } from './accounts.js';
import { DEFAULT_GLOBAL_LEVEL, noEvents, notificationEmailOf } from './notification-levels.js';
import type { NotificationSettingsStorage } from './storage/index.js';
import type { Account } from './storage/index.js';
import type { NotificationEvents, NotificationSettingRecord, UserRecord } from './storage/records.js';

type Schemas = components['schemas'];
export type SourceType = 'group' | 'project';
export type GlobalSettingsParams = Schemas['GlobalNotificationSettingsUpdate'];
export type SourceSettingsParams = Schemas['NotificationSettingsUpdate'];

/** Query strings and forms send booleans as text; the document allows both spellings. */
const toBoolean = (flag: Schemas['EventFlag']) => flag === true || flag === 'true';

/** The events a request names, as booleans; the others it leaves as stored. */
function eventsOf(params: Partial<Record<string, unknown>>): Partial<NotificationEvents> {
  const events: Partial<NotificationEvents> = {};
  for (const event of notificationEvents) {
    const flag = params[event] as Schemas['EventFlag'] | undefined;
    if (flag !== undefined) events[event] = toBoolean(flag);
  }
  return events;
}

/** The global settings of the account an API call authenticated as, which were read with its credential. */
export function presentGlobal({ user, globalSetting }: Account): Schemas['GlobalNotificationSettings'] {
  return globalAnswer(globalSetting, user);
}

function globalAnswer(record: NotificationSettingRecord | undefined, user: UserRecord): Schemas['GlobalNotificationSettings'] {
  const notification_email = notificationEmailOf(record, user);
  const level = record?.level ?? DEFAULT_GLOBAL_LEVEL;
  if (level === 'custom') return { level, notification_email, events: { ...record!.events } };
  // A global setting is never `global`; the document refuses it on the way in.
  return { level: level as Exclude<typeof level, 'custom' | 'global'>, notification_email };
}

/**
 * The answer is built from the record this change wrote, not read back after the write is durable: by then other
 * requests may have changed the setting, and each PUT must show the state it left. The events are applied to the
 * stored version inside the change, so concurrent PUTs keep each other's fields.
 *
 * A notification e-mail must be one of the user's own addresses (GitLab: "is not an email you own"), else the whole
 * change is refused with an InputError before anything is written. It is stored as sent; an empty one means the
 * primary address again.
 */
export async function updateGlobal(settings: NotificationSettingsStorage, user: UserRecord, params: GlobalSettingsParams): Promise<Schemas['GlobalNotificationSettings']> {
  if (params.notification_email && !ownsEmail(user, params.notification_email)) {
    throw new InputError('notification_email', 'is not an email you own');
  }
  const fresh = { user_id: user.id, source_type: 'global' as const, source_id: null, level: DEFAULT_GLOBAL_LEVEL, notification_email: null, events: noEvents() };
  const written = await settings.change(fresh, { level: params.level, notification_email: params.notification_email, events: eventsOf(params) });
  return globalAnswer(written, user);
}

export async function presentSource(settings: NotificationSettingsStorage, user: UserRecord, type: SourceType, sourceId: number): Promise<Schemas['NotificationSettings']> {
  return sourceAnswer(await settings.find({ user_id: user.id, source_type: type, source_id: sourceId }));
}

function sourceAnswer(record: NotificationSettingRecord | undefined): Schemas['NotificationSettings'] {
  if (!record) return { level: 'global' };
  // Spec 4.5 rule 2: custom shows all twelve events; any other level shows the level only.
  if (record.level === 'custom') return { level: 'custom', events: { ...record.events } };
  return { level: record.level };
}

/** Answers from the record written, as updateGlobal does. */
export async function updateSource(settings: NotificationSettingsStorage, user: UserRecord, type: SourceType, sourceId: number, params: SourceSettingsParams): Promise<Schemas['NotificationSettings']> {
  const fresh = { user_id: user.id, source_type: type, source_id: sourceId, level: 'global' as const, notification_email: null, events: noEvents() };
  // Events sent with a non-custom level are kept, to show once the level becomes custom.
  const written = await settings.change(fresh, { level: params.level, events: eventsOf(params) });
  return sourceAnswer(written);
}
