// Everything the domain asks of storage, one interface per aggregate, each method named for the question it answers.
// Two implementations: the JSON file store (file-storage.ts, the zero-setup default) and PostgreSQL
// (postgres/storage.ts), for several instances on one database. Every method is async and takes and answers plain
// values: no predicate, array or index of either store crosses this line. A name that must be unique (username,
// e-mail address, group path, project path, App ID, digest) is refused by the store itself with an InputError
// (`taken`), so two instances racing for one name cannot both win.
import type { GrantStorage, NewTokenPair } from './grant-storage.js';
import type { NotificationSettingsStorage } from './notification-settings-storage.js';
import type { SessionStorage } from './session-storage.js';
import type {
  AccessTokenRecord,
  ApplicationRecord,
  AuthorizationCodeRecord,
  EpochSeconds,
  GroupRecord,
  Membership,
  NotificationEventRecord,
  NotificationSettingRecord,
  OutboxMessageRecord,
  PersonalAccessTokenRecord,
  ProjectRecord,
  UserRecord,
} from './schema.js';

export type { GrantStorage, NewTokenPair, NotificationSettingsStorage, SessionStorage };

/** A group as the domain sees it; its members are asked for, never listed. */
export type Group = Omit<GroupRecord, 'members'>;
/** A project as the domain sees it; its members are asked for, never listed. */
export type Project = Omit<ProjectRecord, 'members'>;

export type NewUserRow = Omit<UserRecord, 'id'>;
export type NewApplicationRow = Omit<ApplicationRecord, 'id'>;
export type NewPersonalAccessTokenRow = Omit<PersonalAccessTokenRecord, 'id'>;
export type NewGroupRow = Omit<Group, 'id'>;
/** A project to add in `namespace` (a group's path or a username, whatever the case). */
export type NewProjectRow = Omit<Project, 'id' | 'namespace' | 'group_id'> & { namespace: string };

export interface UserStorage {
  byId(id: number): Promise<UserRecord | undefined>;
  byUsername(username: string): Promise<UserRecord | undefined>;
  /** The user whose username or else e-mail address is `login`, whatever the case. */
  byLogin(login: string): Promise<UserRecord | undefined>;
  /** Whether there is any user at all (a fresh store gets the demo data). */
  any(): Promise<boolean>;
  /** Throws InputError `taken` for a username, e-mail address or group path already in use. */
  create(user: NewUserRow): Promise<UserRecord>;
  setPasswordHash(id: number, passwordHash: string): Promise<UserRecord | undefined>;
  /**
   * Records `step` as the last TOTP step the active user used, unless they already used it or a later one; answers
   * whether it was recorded. Atomic, so one code cannot sign in twice, even on two instances at once.
   */
  spendOtpStep(id: number, step: number): Promise<boolean>;
}

/** A user's standing on a project: their own membership and the one through the project's group. */
export interface ProjectAccess {
  direct: number | null;
  inherited: number | null;
}

/** A user's standing on a group: their membership, and whether they are a member of one of its projects. */
export interface GroupAccess {
  direct: number | null;
  inAProject: boolean;
}

/** A group or project named in a URL: by id, or by path (a project's full path), compared case-insensitively. */
export type NamespaceRef = { id: number } | { path: string };

export interface NamespaceStorage {
  groupById(id: number): Promise<Group | undefined>;
  groupByPath(path: string): Promise<Group | undefined>;
  projectById(id: number): Promise<Project | undefined>;
  projectByFullPath(fullPath: string): Promise<Project | undefined>;
  projectAccess(userId: number, project: Project): Promise<ProjectAccess>;
  groupAccess(userId: number, group: Group): Promise<GroupAccess>;
  /** The project and the user's standing on it in one question: every API call on a project asks both. */
  projectWithAccess(ref: NamespaceRef, userId: number): Promise<{ project: Project; access: ProjectAccess } | undefined>;
  /** The group and the user's standing on it in one question, as projectWithAccess. */
  groupWithAccess(ref: NamespaceRef, userId: number): Promise<{ group: Group; access: GroupAccess } | undefined>;
  /** Throws InputError `taken` when the path is a group's or a username. */
  createGroup(group: NewGroupRow, members: readonly Membership[]): Promise<Group>;
  /** Throws InputError `unknown` for an unknown namespace, `taken` for a taken full path. */
  createProject(project: NewProjectRow, members: readonly Membership[]): Promise<Project>;
  /**
   * Makes the user a member of the group or project at `accessLevel`, replacing any membership they had there (a
   * user has one per group or project). Throws InputError `unknown` for an unknown user, group or project.
   */
  setMembership(target: MembershipTarget, userId: number, accessLevel: number): Promise<void>;
}

/** A group or a project, by id. */
export type MembershipTarget = { groupId: number } | { projectId: number };

export interface ApplicationStorage {
  byId(id: number): Promise<ApplicationRecord | undefined>;
  byUid(uid: string): Promise<ApplicationRecord | undefined>;
  /** The owner's applications, oldest first. */
  ownedBy(ownerId: number): Promise<ApplicationRecord[]>;
  /** Throws InputError `taken` when the App ID is taken. */
  create(application: NewApplicationRow): Promise<ApplicationRecord>;
  /**
   * Deletes the owner's application with its pending codes, and revokes every live token issued to it (revoked
   * records stay until pruned, so a later use reads as revoked). False when the owner has no such application.
   */
  deleteOwned(ownerId: number, id: number, now: EpochSeconds): Promise<boolean>;
}

/**
 * A user as an API call meets them: the account, and its global notification setting (undefined until one is stored),
 * which the API's most frequent call answers and the service keeps with the account.
 */
export interface Account {
  user: UserRecord;
  globalSetting: NotificationSettingRecord | undefined;
}

export interface PersonalAccessTokenStorage {
  /** The token and its user's account, in one question: every API call with a personal access token asks it. */
  withUserByDigest(tokenDigest: string): Promise<({ token: PersonalAccessTokenRecord } & Account) | undefined>;
  /** The user's tokens, newest first. */
  ofUser(userId: number): Promise<PersonalAccessTokenRecord[]>;
  /** Throws InputError `taken` when the digest is in use. */
  create(token: NewPersonalAccessTokenRow): Promise<PersonalAccessTokenRecord>;
  /** Revokes the user's token; the record as it now is, or null when the user has no such token. */
  revokeOwned(userId: number, id: number): Promise<PersonalAccessTokenRecord | null>;
}

export interface AuthorizationCodeStorage {
  create(code: AuthorizationCodeRecord): Promise<void>;
}

export interface TokenStorage {
  /** Stores a pair outside any chain (the password grant). */
  issue(pair: NewTokenPair): Promise<void>;
  byAccessDigest(tokenDigest: string): Promise<AccessTokenRecord | undefined>;
  /** The pair and the account of the user it was issued to, in one question: every API call asks it. */
  withUserByAccessDigest(tokenDigest: string): Promise<({ token: AccessTokenRecord } & Account) | undefined>;
  byRefreshDigest(refreshDigest: string): Promise<AccessTokenRecord | undefined>;
  /** Revokes the pair (a no-op when it is revoked already). */
  revoke(id: string, now: EpochSeconds): Promise<void>;
  /** The user's pairs not revoked, oldest first. */
  unrevokedOfUser(userId: number): Promise<AccessTokenRecord[]>;
  /**
   * Revokes what the application (null: the password grant without a client) holds for the user and drops its codes
   * for the user; answers whether there was anything: a pair not revoked, or a code unused and unexpired at `now`.
   */
  revokeAuthorization(userId: number, applicationId: number | null, now: EpochSeconds): Promise<boolean>;
}

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

export type NewOutboxMessage = Omit<OutboxMessageRecord, 'status' | 'attempts' | 'claimed_until' | 'last_error' | 'sent_at'>;

/** The outbox: an event and its mails written together, then delivered by workers that claim each mail in turn. */
export interface MailStorage {
  /** The event and its messages, in one write: all of it or none. */
  recordEvent(event: NotificationEventRecord, messages: readonly NewOutboxMessage[]): Promise<void>;
  /**
   * Claims up to `limit` queued messages due at `now`, for `leaseSeconds`: no other worker (on a database, no other
   * instance) gets them until they are marked or the claim runs out. Counts the attempt.
   */
  claimDue(now: EpochSeconds, limit: number, leaseSeconds: number): Promise<OutboxMessageRecord[]>;
  markSent(id: string, now: EpochSeconds): Promise<void>;
  /** Queued again for `nextAttemptAt`, with why this attempt failed. */
  markRetry(id: string, nextAttemptAt: EpochSeconds, error: string): Promise<void>;
  markFailed(id: string, error: string): Promise<void>;
  /** The newest messages first, at most `limit`; only those to `userId`, or of `eventId`, when given. */
  recent(query: { limit: number; userId?: number; eventId?: string }): Promise<OutboxMessageRecord[]>;
}

export interface PruneResult {
  authorizationCodes: number;
  accessTokens: number;
  sessions: number;
  /** Sent or failed messages past the mail retention (queued ones stay until delivered or given up). */
  notificationMessages: number;
}

/** Names a fixture adds, to find which a store has already (all compared case-insensitively, digests exactly). */
export interface NameQuery {
  usernames: string[];
  /** Addresses a user owns, primary or secondary alike: an address belongs to one user. */
  emails: string[];
  groupPaths: string[];
  /** `namespace/path` */
  projectPaths: string[];
  clientIds: string[];
  tokenDigests: string[];
}

/** Of the names asked, those the store has, mapped from their lower-cased form to the stored spelling. */
export type FoundNames = { [K in keyof NameQuery]: Map<string, string> };

/** A checked fixture, in the order it is applied; members and owners named by username. */
export interface SeedRows {
  users: Array<{ user: NewUserRow; tokens: Array<Omit<NewPersonalAccessTokenRow, 'user_id'>> }>;
  groups: Array<{ group: NewGroupRow; members: Array<{ username: string; access_level: number }> }>;
  projects: Array<{ project: NewProjectRow; members: Array<{ username: string; access_level: number }> }>;
  applications: Array<{ owner: string; application: Omit<NewApplicationRow, 'owner_id'> }>;
}

declare const storeSnapshot: unique symbol;
/**
 * A store's whole state at one moment, for `restore` on the same store. Opaque: what it holds is the store's business,
 * and the domain has no reason to read state past the questions above.
 */
export interface StoreSnapshot {
  readonly [storeSnapshot]: true;
}

export interface MaintenanceStorage {
  /** A secret of the instance (or, on a database, of every instance on it), made when first asked for. */
  instanceSecret(name: string): Promise<string>;
  /** Drops what can never be used again; null when another instance is doing it. */
  prune(now: EpochSeconds): Promise<PruneResult | null>;
  /** Whether the store can take writes now, and why not. */
  readiness(): Promise<{ ready: boolean; problem?: string }>;
  existingNames(query: NameQuery): Promise<FoundNames>;
  /** Applies a seed all at once or not at all; a name taken meanwhile throws InputError `taken`. */
  applySeed(rows: SeedRows): Promise<void>;
  /**
   * The whole state as it is now, to `restore` later (a test kit resets to the seeded state before every test); null
   * when this store cannot restore one: a database every instance on it shares is no one instance's to reset.
   */
  snapshot(): Promise<StoreSnapshot | null>;
  /**
   * Replaces the whole state with the snapshot's, durably and all at once: a crash leaves the old state or the
   * snapshot's, never a mix. The instance's secrets stay as they are (a reset must not sign everyone out), and the
   * snapshot stays good for another restore. Throws on a store whose `snapshot` answers null.
   */
  restore(snapshot: StoreSnapshot): Promise<void>;
  /** Told how long each durable write took, in seconds (the metrics' store write latency). */
  observeWrites(observer: (seconds: number) => void): void;
  /** Finishes pending writes and lets go of the store. */
  close(): Promise<void>;
  /** What the listening line says the data lives in. */
  describe(): string;
}

export interface Storage {
  users: UserStorage;
  namespaces: NamespaceStorage;
  applications: ApplicationStorage;
  personalAccessTokens: PersonalAccessTokenStorage;
  codes: AuthorizationCodeStorage;
  tokens: TokenStorage;
  grants: GrantStorage;
  notificationSettings: NotificationSettingsStorage;
  recipients: RecipientStorage;
  sessions: SessionStorage;
  mail: MailStorage;
  maintenance: MaintenanceStorage;
}
