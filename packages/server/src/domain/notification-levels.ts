// How a user's notification level for a project is resolved. Follows GitLab's NotificationRecipient
// #find_notification_setting (app/models/notification_recipient.rb): the project setting unless it is `global` or
// absent, then the project's group setting on the same terms, then the user's global setting.
import { notificationEvents } from '../openapi/document.js';
import type { AudienceMember } from './storage/index.js';
import type { NotificationEvents, NotificationLevel, NotificationSettingRecord, UserRecord } from './storage/records.js';

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

function decided(setting: NotificationSettingRecord | undefined): setting is NotificationSettingRecord & { level: ResolvedLevel } {
  return setting !== undefined && setting.level !== 'global';
}

/** The user's settings that bear on one project: for the project, for its group, and the global one. */
export type SettingsForProject = AudienceMember['settings'];

export function effectiveSetting(settings: SettingsForProject): EffectiveSetting {
  const { project: own, group, global: g } = settings;
  if (decided(own)) return { level: own.level, events: { ...own.events }, source: 'project' };
  if (decided(group)) return { level: group.level, events: { ...group.events }, source: 'group' };
  // A stored global setting of `global` would refer to itself (the document refuses it); treat it like none.
  if (decided(g)) return { level: g.level, events: { ...g.events }, source: 'global' };
  return { level: DEFAULT_GLOBAL_LEVEL, events: g ? { ...g.events } : noEvents(), source: 'global' };
}

/** Where mail for the user goes: the global setting's address when one is set, else the account's. */
export function notificationEmailOf(globalSetting: NotificationSettingRecord | undefined, user: UserRecord): string {
  return globalSetting?.notification_email || user.email;
}
