// The file store's collections and their unique indexes (the first of each its primary key), and the freezing
// that makes a change outside the store throw instead of silently missing the journal.
import { notificationSettingKey } from '../../domain/storage/index.js';
import type { StoreData } from './schema.js';

/** The array-valued members of StoreData. */
export type Collection = { [K in keyof StoreData]: StoreData[K] extends readonly unknown[] ? K : never }[keyof StoreData];
export type RecordOf<C extends Collection> = StoreData[C][number];
export type Sequence = keyof StoreData['sequences'];
/** The fields of a record that `update` may change, with their new values. */
export type Patch<C extends Collection> = { [K in keyof RecordOf<C>]?: RecordOf<C>[K] };

export interface IndexSpec<R> {
  /** The record's key, or null for none; a list gives the record one key per entry (the primary key is never one). */
  key: (record: R) => IndexKey;
  /** Logins, e-mail addresses and paths are matched whatever their case, as the hosted service does. */
  caseInsensitive?: boolean;
}
export type IndexKey = string | number | null | readonly string[];
type IndexSpecs = { [C in Collection]: Record<string, IndexSpec<RecordOf<C>>> };

// Every index is unique, and the first one of each collection is its primary key: never null, and what the journal
// names a record by. Indexed fields never change after insert (`update` refuses), so insert/remove are the only
// maintenance besides pointing the indexes at a record's new version.
export const indexSpecs = {
  users: {
    id: { key: (u) => u.id },
    username: { key: (u) => u.username, caseInsensitive: true },
    email: { key: (u) => u.email, caseInsensitive: true },
    // Every address the user owns, primary and secondary: no address belongs to two users, nor twice to one.
    address: { key: (u) => [u.email, ...u.secondary_emails], caseInsensitive: true },
  },
  groups: {
    id: { key: (g) => g.id },
    path: { key: (g) => g.path, caseInsensitive: true },
  },
  projects: {
    id: { key: (p) => p.id },
    fullPath: { key: (p) => `${p.namespace}/${p.path}`, caseInsensitive: true },
  },
  applications: {
    id: { key: (a) => a.id },
    uid: { key: (a) => a.uid },
  },
  personal_access_tokens: {
    id: { key: (t) => t.id },
    token_digest: { key: (t) => t.token_digest },
  },
  authorization_codes: {
    code_digest: { key: (c) => c.code_digest },
  },
  access_tokens: {
    id: { key: (t) => t.id },
    token_digest: { key: (t) => t.token_digest },
    refresh_digest: { key: (t) => t.refresh_digest },
  },
  notification_settings: {
    key: { key: (s) => notificationSettingKey(s.user_id, s.source_type, s.source_id) },
  },
  sessions: {
    sid_digest: { key: (s) => s.sid_digest },
  },
  notification_events: {
    id: { key: (e) => e.id },
  },
  outbox: {
    id: { key: (m) => m.id },
  },
  device_grants: {
    id: { key: (g) => g.id },
    device_code_digest: { key: (g) => g.device_code_digest },
    user_code_digest: { key: (g) => g.user_code_digest },
  },
  signing_keys: {
    kid: { key: (k) => k.kid },
  },
} satisfies IndexSpecs;

export type IndexField<C extends Collection> = keyof (typeof indexSpecs)[C] & string;

export const collections = Object.keys(indexSpecs) as Collection[];

/**
 * The collections that belong to the instance rather than to its state, as the secrets do: a snapshot leaves them out
 * and a restore leaves them as they are, so that a test kit's reset keeps the keys id_tokens were signed with.
 */
export const instanceCollections = ['signing_keys'] as const satisfies readonly Collection[];
/** The collections a snapshot holds. */
export type StateCollection = Exclude<Collection, (typeof instanceCollections)[number]>;
export const stateCollections = collections.filter((c): c is StateCollection => !(instanceCollections as readonly Collection[]).includes(c));
export const isCollection = (name: unknown): name is Collection => typeof name === 'string' && Object.hasOwn(indexSpecs, name);

// Listed once: insert and update walk them on every write.
const specLists = new Map(collections.map((c) => [c, Object.entries(indexSpecs[c])]));

/** A collection's indexes, the primary key first. */
export function specsOf<C extends Collection>(collection: C): Array<[string, IndexSpec<RecordOf<C>>]> {
  return specLists.get(collection) as Array<[string, IndexSpec<RecordOf<C>>]>;
}

export function normalise(value: string | number, spec: IndexSpec<never>): string {
  const text = String(value);
  return spec.caseInsensitive ? text.toLowerCase() : text;
}

/** A record's keys in an index, normalised: none, one, or one per entry of a list. */
export function keysOf<R>(record: R, spec: IndexSpec<R>): string[] {
  const raw = spec.key(record);
  if (raw === null) return [];
  return typeof raw === 'object' ? raw.map((key) => normalise(key, spec)) : [normalise(raw, spec)];
}

/** Whether two keys of one index are the same, entry by entry for lists. */
export function sameKey(a: IndexKey, b: IndexKey): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return a.length === b.length && a.every((key, i) => key === b[i]);
}

/** Freezes a value and everything it holds, so a stray assignment throws (modules run in strict mode). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}
