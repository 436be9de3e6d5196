// How a user's notification level for a project is resolved. Follows GitLab's NotificationRecipient
// #find_notification_setting (app/models/notification_recipient.rb): the project setting unless it is `global` or
// absent, then the project's group setting on the same terms, then the user's global setting.
import { notificationEvents } from '../openapi/document.js';
import { type Store, notificationSettingKey } from '../store/file-store.js';
import type { NotificationEvents, NotificationLevel, NotificationSettingRecord, ProjectRecord, UserRecord } from '../store/schema.js';

/** A level after resolution; `global` only ever points elsewhere, so it never comes out. */
export type ResolvedLevel = Exclude<NotificationLevel, 'global'>;

export interface EffectiveSetting {
  level: ResolvedLevel;
  /** The events of the setting that decided; all false when nothing is stored there. */
  events: NotificationEvents;
  source: 'project' | 'group' | 'global';
}

/** GitLab's default global level for an account that never chose one (User#global_notification_setting). */
export const DEFAULT_GLOBAL_LEVEL: ResolvedLevel = 'participating';

export function noEvents(): NotificationEvents {
  return Object.fromEntries(notificationEvents.map((e) => [e, false])) as NotificationEvents;
}

/** The setting the user stored for a source (global: `sourceId` null), if any. */
export function findSetting(
  store: Store,
  userId: number,
  sourceType: NotificationSettingRecord['source_type'],
  sourceId: number | null,
): NotificationSettingRecord | undefined {
  return store.lookup('notificationSettings', 'key', notificationSettingKey(userId, sourceType, sourceId));
}

function decided(setting: NotificationSettingRecord | undefined): setting is NotificationSettingRecord & { level: ResolvedLevel } {
  return setting !== undefined && setting.level !== 'global';
}

function globalSetting(store: Store, userId: number): EffectiveSetting {
  const g = findSetting(store, userId, 'global', null);
  // A stored global setting of `global` would refer to itself (the document refuses it); treat it like none.
  if (decided(g)) return { level: g.level, events: { ...g.events }, source: 'global' };
  return { level: DEFAULT_GLOBAL_LEVEL, events: g ? { ...g.events } : noEvents(), source: 'global' };
}

export function effectiveSetting(store: Store, userId: number, project: ProjectRecord): EffectiveSetting {
  const own = findSetting(store, userId, 'project', project.id);
  if (decided(own)) return { level: own.level, events: { ...own.events }, source: 'project' };
  if (project.group_id !== null) {
    const group = findSetting(store, userId, 'group', project.group_id);
    if (decided(group)) return { level: group.level, events: { ...group.events }, source: 'group' };
  }
  return globalSetting(store, userId);
}

/** Where mail for the user goes: the global setting's address when one is set, else the account's. */
export function notificationEmailOf(globalSetting: NotificationSettingRecord | undefined, user: UserRecord): string {
  return globalSetting?.notification_email || user.email;
}

export function notificationEmail(store: Store, user: UserRecord): string {
  return notificationEmailOf(findSetting(store, user.id, 'global', null), user);
}
