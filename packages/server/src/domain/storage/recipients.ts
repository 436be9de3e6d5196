// What the domain asks when it chooses who hears of an event.
import type { NotificationSettingRecord, UserRecord } from './records.js';
import type { Project, ProjectAccess } from './namespaces.js';

/** One user who may hear of an event on a project, with what decides whether they do. */
export interface AudienceMember {
  user: UserRecord;
  access: ProjectAccess;
  settings: { project?: NotificationSettingRecord; group?: NotificationSettingRecord; global?: NotificationSettingRecord };
}

/** What recipients are chosen from: the project, and each user who may hear of it (the asked-for ones included). */
export interface Audience {
  project: Project;
  /** Members of the project or its group, and users with a setting for either. */
  interested: number[];
  /** Every interested user and every asked-for user who exists. */
  members: Map<number, AudienceMember>;
}

export interface RecipientStorage {
  /** The project's audience, with these users in it whatever their ties; undefined for an unknown project. */
  audience(projectId: number, userIds: readonly number[]): Promise<Audience | undefined>;
}
