// What the server asks of a store as a whole: its secrets, pruning, readiness, seeding and snapshots.
import type { EpochSeconds } from './records.js';
import type { NewApplicationRow } from './applications.js';
import type { NewGroupRow, NewProjectRow } from './namespaces.js';
import type { NewPersonalAccessTokenRow } from './tokens.js';
import type { NewUserRow } from './users.js';

export interface PruneResult {
  authorizationCodes: number;
  /** Device authorizations past expiry. */
  deviceGrants: number;
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

/**
 * How each kind of name compares, as the service has it: usernames, e-mail addresses and group and project paths
 * whatever the case; App IDs (Doorkeeper's uid) and token digests exactly. The one rule that a seed's check and both
 * stores' answers key their names by, so that what one looks up is what the other found.
 */
export const nameKeys: { readonly [K in keyof NameQuery]: (name: string) => string } = {
  usernames: (name) => name.toLowerCase(),
  emails: (name) => name.toLowerCase(),
  groupPaths: (name) => name.toLowerCase(),
  projectPaths: (name) => name.toLowerCase(),
  clientIds: (name) => name,
  tokenDigests: (name) => name,
};

/** Of the names asked, those the store has, each by its key (nameKeys) mapped to the stored spelling. */
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

export interface PoolUsage {
  /** Connections lent to a statement or a transaction. */
  inUse: number;
  idle: number;
  /** Callers waiting for a connection: every one is in use and the pool is at its size. */
  waiting: number;
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
  /** How the database's connections are used now; null for a store that has none (the data file). */
  poolUsage(): PoolUsage | null;
  /** Finishes pending writes and lets go of the store. */
  close(): Promise<void>;
  /** What the listening line says the data lives in. */
  describe(): string;
}
