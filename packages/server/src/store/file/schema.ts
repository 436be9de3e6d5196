// The shape of the JSON data file: the domain's records (domain/storage/records.ts) in one collection each, with the
// sequences, the instance's secrets and the journal generation that belong to the file alone.
import type {
  AccessTokenRecord,
  ApplicationRecord,
  AuthorizationCodeRecord,
  DeviceGrantRecord,
  GroupRecord,
  NotificationEventRecord,
  NotificationSettingRecord,
  OutboxMessageRecord,
  PersonalAccessTokenRecord,
  ProjectRecord,
  SessionRecord,
  SigningKeyRecord,
  UserRecord,
} from '../../domain/storage/records.js';

export type * from '../../domain/storage/records.js';

/**
 * 3: one naming convention (snake_case, as the PostgreSQL schema and the API spell fields) and one representation of
 * time (epoch seconds) for every stored field. 2: the file names the generation of the journal that continues it
 * (`journal`). Files of versions 1 and 2 are read too, and written as 3 (upgrade.ts).
 */
export const SCHEMA_VERSION = 3;

export interface StoreData {
  version: typeof SCHEMA_VERSION;
  /** The generation of the journal (`<file>.journal`) whose operations follow this snapshot. */
  journal: number;
  secrets: {
    /** Signs the session cookie; made at first start. */
    session_key: string;
  };
  /** Replaced whole by each `nextId`, never changed in place. */
  sequences: {
    users: number;
    groups: number;
    projects: number;
    applications: number;
    personal_access_tokens: number;
  };
  users: UserRecord[];
  groups: GroupRecord[];
  projects: ProjectRecord[];
  applications: ApplicationRecord[];
  personal_access_tokens: PersonalAccessTokenRecord[];
  authorization_codes: AuthorizationCodeRecord[];
  access_tokens: AccessTokenRecord[];
  notification_settings: NotificationSettingRecord[];
  sessions: SessionRecord[];
  notification_events: NotificationEventRecord[];
  outbox: OutboxMessageRecord[];
  device_grants: DeviceGrantRecord[];
  /** The instance's id_token signing keys: like the secrets, kept apart from the state a snapshot holds. */
  signing_keys: SigningKeyRecord[];
}
