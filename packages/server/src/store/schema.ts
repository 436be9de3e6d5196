// The shape of the JSON data file. Secrets (passwords, tokens, codes, client secrets) appear only as digests:
// passwords as scrypt hashes, random high-entropy values as SHA-256 hex digests (see domain/secrets.ts).
import type { components } from '../generated/openapi.js';

type Schemas = components['schemas'];
export type NotificationLevel = Schemas['NotificationLevel'];
export type NotificationEvent = Schemas['NotificationEvent'];
export type NotificationEvents = Schemas['NotificationEvents'];
export type Visibility = 'private' | 'internal' | 'public';
/** Scopes as the document's oauth2 scheme lists them. */
export type Scope = 'api' | 'read_api' | 'read_user';

export const SCHEMA_VERSION = 1;

/** Seconds since the Unix epoch, as the token endpoint reports `created_at`. */
export type EpochSeconds = number;
/** An ISO 8601 timestamp. */
export type IsoTime = string;

export interface UserRecord {
  id: number;
  username: string;
  email: string;
  name: string;
  /** `scrypt$N$r$p$salt$hash`, never the password. */
  passwordHash: string;
  two_factor_enabled: boolean;
  state: 'active' | 'blocked';
  is_admin: boolean;
  bio: string;
  created_at: IsoTime;
}

export interface Membership {
  user_id: number;
  /** 10 guest, 20 reporter, 30 developer, 40 maintainer, 50 owner (as the hosted service numbers them). */
  access_level: number;
}

export interface GroupRecord {
  id: number;
  /** The group's path, unique, e.g. `acme`. */
  path: string;
  name: string;
  visibility: Visibility;
  members: Membership[];
  created_at: IsoTime;
}

export interface ProjectRecord {
  id: number;
  /** The owning group's path or user's username; the project's full path is `namespace/path`. */
  namespace: string;
  path: string;
  name: string;
  visibility: Visibility;
  /** The group the project belongs to, or null for a project in a user's namespace. */
  group_id: number | null;
  members: Membership[];
  created_at: IsoTime;
}

export interface ApplicationRecord {
  id: number;
  /** The App ID, sent as client_id. */
  uid: string;
  /** SHA-256 hex digest of the App Secret. */
  secretDigest: string;
  name: string;
  redirect_uris: string[];
  scopes: Scope[];
  owner_id: number;
  created_at: IsoTime;
}

export interface PersonalAccessTokenRecord {
  id: number;
  user_id: number;
  name: string;
  tokenDigest: string;
  scopes: Scope[];
  created_at: IsoTime;
  /** Last day of validity (YYYY-MM-DD), or null for no expiry. */
  expires_at: string | null;
  revoked: boolean;
}

/** An authorization code (RFC 6749 section 4.1.2), single-use and short-lived. */
export interface AuthorizationCodeRecord {
  id: string;
  codeDigest: string;
  application_id: number;
  user_id: number;
  redirect_uri: string;
  scopes: Scope[];
  code_challenge: string | null;
  code_challenge_method: 'S256' | null;
  created_at: EpochSeconds;
  expires_at: EpochSeconds;
  /** Set when the code is exchanged; a second exchange revokes every token issued from it. */
  used_at: EpochSeconds | null;
}

/** An OAuth access token and, for the code and refresh grants, its refresh token. */
export interface AccessTokenRecord {
  id: string;
  tokenDigest: string;
  refreshDigest: string | null;
  /** Null for a password grant without client authentication. */
  application_id: number | null;
  user_id: number;
  scopes: Scope[];
  created_at: EpochSeconds;
  expires_in: number;
  revoked_at: EpochSeconds | null;
  /** The authorization code the chain started from, so a replayed code revokes all of it. */
  code_id: string | null;
}

/** One user's setting for one source: global (source_id null), a group or a project. */
export interface NotificationSettingRecord {
  user_id: number;
  source_type: 'global' | 'group' | 'project';
  source_id: number | null;
  level: NotificationLevel;
  /** Global settings only; null means the account's e-mail. */
  notification_email: string | null;
  /** Kept whatever the level, shown only when the level is `custom`. */
  events: NotificationEvents;
}

export interface SessionRecord {
  /** The SHA-256 digest of the session id, never the id itself: the id in the cookie is a bearer credential. */
  sid: string;
  /** express-session's serialised session. */
  session: Record<string, unknown>;
  /** Epoch milliseconds. */
  expires: number;
}

export interface StoreData {
  version: typeof SCHEMA_VERSION;
  secrets: {
    /** Signs the session cookie; made at first start. */
    sessionKey: string;
  };
  sequences: {
    users: number;
    groups: number;
    projects: number;
    applications: number;
    personalAccessTokens: number;
  };
  users: UserRecord[];
  groups: GroupRecord[];
  projects: ProjectRecord[];
  applications: ApplicationRecord[];
  personalAccessTokens: PersonalAccessTokenRecord[];
  authorizationCodes: AuthorizationCodeRecord[];
  accessTokens: AccessTokenRecord[];
  notificationSettings: NotificationSettingRecord[];
  sessions: SessionRecord[];
}
