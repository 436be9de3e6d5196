// The server's whole state lives in one JSON document held in memory (lowdb). Readers use `store.data` directly;
// every change goes through the store's own methods (insert, update, remove, nextId, replaceState) inside
// `store.commit`, which runs synchronously (so the event loop serialises concurrent requests without locks) and
// resolves once the change is durable.
//
// Durable means journaled: each batch of commits appends its operations to `<data>.journal` and fdatasyncs it
// before any commit in it is answered. The JSON file itself is rewritten (compacted) only when the journal has
// grown as large as the file, when the whole state is replaced, when the store opens after a crash, and when it
// closes, so after a clean stop the JSON file alone holds everything. Records are frozen: a change made any other
// way than through the store would never reach the journal, so it throws instead.
import { randomBytes } from 'node:crypto';
import { access, mkdir } from 'node:fs/promises';
import { constants, renameSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Low, Memory } from 'lowdb';
import { DurableJsonFile } from './durable-json-file.js';
import { Journal, JournalCorruptError, journalFileOf, type JournalContents, type JournalOp } from './journal.js';
import { SCHEMA_VERSION, type StoreData } from './schema.js';
import { limits } from '../../config.js';
import { StoreAccessError, StoreClosedError, StoreCorruptError, StoreVersionError, accessProblem } from '../errors.js';
import { FileLock } from './lock.js';
import { collectionsWithAddedFields, opWithAddedFields, upgradeData, upgradeOp, withAddedFields } from './upgrade.js';
import {
  type Collection,
  type IndexField,
  type IndexSpec,
  type Patch,
  type RecordOf,
  type Sequence,
  collections,
  deepFreeze,
  indexSpecs,
  isCollection,
  keysOf,
  normalise,
  sameKey,
  specsOf,
} from './indexes.js';

import type { PruneResult } from '../../domain/storage/index.js';
export { StoreAccessError, StoreClosedError, StoreCorruptError, StoreLockedError, StoreVersionError } from '../errors.js';
export { notificationSettingKey } from '../../domain/storage/index.js';
export { type Collection, type IndexField, type Patch, type RecordOf, type Sequence } from './indexes.js';


/**
 * Every collection and sequence at one moment (`captureState`), without what belongs to the instance or the file
 * rather than to the state: the secrets and the journal's generation.
 */
export type StoreState = { readonly [C in Collection]: readonly RecordOf<C>[] } & { readonly sequences: Readonly<StoreData['sequences']> };

export interface OpenStoreOptions {
  /** The JSON data file, or null for a store that lives only in memory (tests). */
  file: string | null;
  /**
   * The journal is folded into the JSON file once it is as large as the file and at least this large (default
   * 4 MiB): rewriting the file costs time in proportion to its size, so this keeps each append's share constant.
   */
  minCompactionBytes?: number;
}

export class Store {
  readonly file: string | null;
  readonly #db: Low<StoreData>;
  /** The snapshot's adapter; null for a memory store. */
  readonly #snapshot: DurableJsonFile<StoreData> | null;
  readonly #indexes = new Map<Collection, Map<string, Map<string, unknown>>>();
  /**
   * Where each record sits in its collection's array, for updates: finding it by scanning cost a refresh grant
   * most of its CPU once the tokens ran into tens of thousands. Built on first use, kept by inserts and updates,
   * dropped when records are removed (which scans the array anyway) or the state is replaced.
   */
  readonly #positions = new Map<Collection, Map<unknown, number>>();
  readonly #lock: FileLock | null;
  readonly #minCompactionBytes: number;
  #journal: Journal | null = null;
  /** Set when the journal may not match memory (a failed append or compaction, a replaced state): the next write compacts. */
  #mustCompact = false;
  /** States replaced so far: a compaction that serialised memory before the latest one must not clear #mustCompact. */
  #replacedStates = 0;
  /** Operations made since the last journal append; null for a memory store, which keeps none. */
  #ops: JournalOp[] | null;
  /** Replaying a journal applies operations without recording them again. */
  #replaying = false;
  /** Commits waiting for the next write. */
  #pending: Deferred | null = null;
  #writing: Promise<void> | null = null;
  #closed = false;
  #acknowledged = 0;
  #fileWrites = 0;
  #compactions = 0;

  /** @internal use openStore */
  constructor(db: Low<StoreData>, file: string | null, lock: FileLock | null, minCompactionBytes: number = limits.minCompactionBytes) {
    this.#db = db;
    this.#minCompactionBytes = minCompactionBytes;
    this.#snapshot = db.adapter instanceof DurableJsonFile ? (db.adapter as DurableJsonFile<StoreData>) : null;
    this.file = file;
    this.#lock = lock;
    this.#ops = this.#snapshot ? [] : null;
    this.#buildIndexes();
  }

  /** The live data. Read it freely; change it only through the store's methods inside `commit`. */
  get data(): StoreData {
    return this.#db.data;
  }

  /**
   * Runs `mutate` now, synchronously, then resolves with its result once a write holding the change is durable.
   * Commits made while a write is in flight share the next write, so a burst of N commits costs about two writes
   * rather than N; a commit that changed nothing costs none.
   *
   * If `mutate` throws, the error propagates. Changes it made before throwing stay in memory (and reach the file
   * with the next commit), so callers validate everything first and only then mutate: a throw must never leave a
   * half-change. `mutate` must not be async: the event loop is what serialises commits. If the write itself fails,
   * every commit sharing it rejects; the changes stay in memory and the next successful write carries them.
   */
  async commit<T>(mutate: (data: StoreData) => T): Promise<T> {
    if (this.#closed) throw new StoreClosedError(`the store${this.file ? ` for ${this.file}` : ''} is closed`);
    const started = performance.now();
    const result = mutate(this.#db.data);
    await this.#scheduleWrite();
    this.commitObserver?.((performance.now() - started) / 1000);
    return result;
  }

  /** Told how long each commit took until durable, in seconds (the metrics' store write latency). */
  commitObserver: ((seconds: number) => void) | null = null;

  /**
   * Whether the store can take writes now: open, and for a data file, its directory writable (a full or read-only
   * disk shows here before the next commit fails). The readiness probe asks this.
   */
  async readiness(): Promise<{ ready: boolean; problem?: string }> {
    if (this.#closed) return { ready: false, problem: 'the store is closed' };
    if (this.file === null) return { ready: true };
    try {
      await access(dirname(this.file), constants.W_OK);
      return { ready: true };
    } catch (error) {
      return { ready: false, problem: `the directory of ${this.file} is not writable (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
    }
  }

  /** Appends a record and indexes it (inside `commit`). Throws, changing nothing, if a unique key is taken. */
  insert<C extends Collection>(collection: C, record: RecordOf<C>): RecordOf<C> {
    const maps = this.#indexes.get(collection)!;
    const keys: Array<[Map<string, unknown>, string]> = [];
    for (const [field, spec] of specsOf(collection)) {
      const map = maps.get(field)!;
      for (const key of keysOf(record, spec)) {
        // Checked against the record's own earlier keys too: a list may not name one key twice.
        if (map.has(key) || keys.some(([m, k]) => m === map && k === key)) throw new Error(`${collection}.${field} ${JSON.stringify(key)} already exists`);
        keys.push([map, key]);
      }
    }
    deepFreeze(record);
    for (const [map, key] of keys) map.set(key, record);
    const records = this.#db.data[collection] as RecordOf<C>[];
    this.#positions.get(collection)?.set(record, records.length);
    records.push(record);
    this.#record(['insert', collection, record]);
    return record;
  }

  /**
   * Replaces the stored version of `record` (found by its primary key, so an older copy will do) with one that
   * has `patch` applied, and answers the new version (inside `commit`). Indexed fields cannot change.
   */
  update<C extends Collection>(collection: C, record: RecordOf<C>, patch: Patch<C>): RecordOf<C> {
    return this.#updateByKey(collection, this.#primaryKeyOf(collection, record), patch);
  }

  /** Removes every matching record and forgets it in the indexes (inside `commit`); returns the removed ones. */
  remove<C extends Collection>(collection: C, predicate: (record: RecordOf<C>) => boolean): RecordOf<C>[] {
    const records = this.#db.data[collection] as RecordOf<C>[];
    const removed: RecordOf<C>[] = [];
    // Compacted in place: callers may hold the array, and one pass keeps large prunes linear.
    let kept = 0;
    for (const record of records) {
      if (predicate(record)) removed.push(record);
      else records[kept++] = record;
    }
    records.length = kept;
    if (removed.length > 0) {
      this.#positions.delete(collection);
      const maps = this.#indexes.get(collection)!;
      for (const record of removed) {
        this.#record(['remove', collection, this.#primaryKeyOf(collection, record)]);
        for (const [field, spec] of specsOf(collection)) {
          for (const key of keysOf(record, spec)) maps.get(field)!.delete(key);
        }
      }
    }
    return removed;
  }

  /**
   * Every collection and sequence as they are now. Records are frozen and never changed in place (an update stores a
   * new version), so the copy shares them and copies only the arrays: cheap, and beyond the reach of any later write.
   */
  captureState(): StoreState {
    const data = this.#db.data;
    const state: Record<string, unknown> = { sequences: Object.freeze({ ...data.sequences }) };
    for (const collection of collections) state[collection] = Object.freeze([...data[collection]]);
    return Object.freeze(state) as StoreState;
  }

  /**
   * Replaces every collection and sequence with `state`'s and rebuilds the indexes (inside `commit`); the secrets and
   * the journal's generation stay. A journal line cannot say "replace everything", so the write carrying this is a
   * compaction, whose atomic rename leaves the file holding either the old state or this one after a crash.
   */
  replaceState(state: StoreState): void {
    const data = this.#db.data;
    for (const collection of collections) {
      const records = data[collection] as unknown[];
      // In place, as `remove` does: callers may hold the array. A loop, as a spread of a long array overflows the stack.
      records.length = 0;
      for (const record of state[collection]) records.push(record);
    }
    data.sequences = { ...state.sequences };
    this.#buildIndexes();
    this.#replacedStates += 1;
    this.#mustCompact = true;
  }

  /** O(1) lookup by an indexed field; case-insensitive fields match whatever the case of `value`. */
  lookup<C extends Collection, F extends IndexField<C>>(
    collection: C,
    field: F,
    value: string | number,
  ): RecordOf<C> | undefined {
    const spec = (indexSpecs[collection] as Record<string, IndexSpec<RecordOf<C>>>)[field]!;
    return this.#indexes.get(collection)!.get(field)!.get(normalise(value, spec)) as RecordOf<C> | undefined;
  }

  /** The next integer id of a sequence (inside `commit`). */
  nextId(sequence: Sequence): number {
    const value = this.#db.data.sequences[sequence] + 1;
    this.#db.data.sequences = { ...this.#db.data.sequences, [sequence]: value };
    this.#record(['sequence', sequence, value]);
    return value;
  }

  /**
   * Drops what can never be used again (inside `commit`, or through `pruneStore`): authorization codes past expiry,
   * and access tokens past revocation or expiry whose refresh token is unusable too, each by more than the grace
   * (`limits.pruneGraceSeconds`), which keeps records around for error messages and replay detection; expired
   * sessions; and notification mail past its retention.
   */
  prune(nowSeconds: number): PruneResult {
    const cutoff = nowSeconds - limits.pruneGraceSeconds;
    return {
      authorizationCodes: this.remove('authorization_codes', (c) => c.expires_at < cutoff).length,
      accessTokens: this.remove('access_tokens', (t) =>
        // Revoking a record revokes its refresh token as well; otherwise a refresh token lives until used.
        t.revoked_at !== null ? t.revoked_at < cutoff : t.refresh_digest === null && t.created_at + t.expires_in < cutoff,
      ).length,
      sessions: this.remove('sessions', (s) => s.expires_at <= nowSeconds).length,
      notificationMessages: this.#pruneMail(nowSeconds - limits.mailRetentionSeconds),
    };
  }

  /** Messages delivered or given up before `cutoff`, and the events of that age left without a message. */
  #pruneMail(cutoff: number): number {
    const removed = this.remove('outbox', (m) => m.status !== 'queued' && m.created_at < cutoff).length;
    if (removed > 0) {
      const kept = new Set(this.data.outbox.map((m) => m.event_id));
      this.remove('notification_events', (e) => e.created_at < cutoff && !kept.has(e.id));
    }
    return removed;
  }

  /**
   * Commits acknowledged (durable), durable writes made for them (journal appends and compactions), and
   * compactions alone. Acknowledged per write is how many commits one write carries, which is what keeps
   * durable writes cheap under load.
   */
  get stats(): { acknowledged: number; fileWrites: number; compactions: number } {
    return { acknowledged: this.#acknowledged, fileWrites: this.#fileWrites, compactions: this.#compactions };
  }

  /** Resolves once every commit made so far is durable. */
  async flush(): Promise<void> {
    while (this.#pending || this.#writing) {
      await (this.#pending?.promise ?? this.#writing)!.catch(() => undefined);
    }
  }

  /**
   * Waits for pending writes, folds the journal into the JSON file (so the file alone is the whole state once
   * the server has stopped), then releases the lock. Later commits fail.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.flush();
      const unfolded = this.#mustCompact || !this.#journal || this.#journal.bytes > 0 || (this.#ops?.length ?? 0) > 0;
      if (this.#snapshot && unfolded) await this.#compact();
    } finally {
      await this.#journal?.close().catch(() => undefined);
      this.#journal = null;
      await this.#lock?.release();
    }
  }

  /**
   * @internal openStore: applies a journal read from disk on top of the snapshot this store was opened from,
   * then makes sure the journal on disk continues this snapshot.
   */
  async attachJournal(found: (JournalContents & { tornTail: boolean }) | null, upgraded = false): Promise<void> {
    const generation = this.#db.data.journal;
    const current = found !== null && found.generation === generation;
    if (found !== null && found.generation > generation) {
      throw new StoreCorruptError(
        `the journal ${journalFileOf(this.file!)} is newer than the data file ${this.file} (generation ${found.generation} after ${generation}); was an older data file restored? Both were left unchanged`,
      );
    }
    if (current) this.replay(found.ops, journalFileOf(this.file!));
    // An upgraded snapshot is written in the current version at once, so the file never holds two versions' worth.
    if (current && found.ops.length === 0 && !found.tornTail && !upgraded) {
      this.#journal = await Journal.reopen(journalFileOf(this.file!));
    } else {
      // Missing, stale (already in the snapshot), or holding changes: fold them in and start a fresh journal.
      await this.#compact();
    }
  }

  /** @internal Applies journaled operations, as when the store opens (`source` names them in errors). */
  replay(ops: readonly JournalOp[], source: string): void {
    this.#replaying = true;
    try {
      ops.forEach((op, i) => {
        try {
          this.#apply(op);
        } catch (error) {
          throw new StoreCorruptError(`${source}: operation ${i + 1} cannot be applied (${(error as Error).message}); it was left unchanged`);
        }
      });
    } finally {
      this.#replaying = false;
    }
  }

  #apply(op: JournalOp): void {
    const [kind, name] = op;
    if (kind === 'sequence') {
      if (!Object.hasOwn(this.#db.data.sequences, name) || !Number.isSafeInteger(op[2])) throw new Error(`bad sequence ${name}`);
      this.#db.data.sequences = { ...this.#db.data.sequences, [name]: op[2] };
      return;
    }
    if (!isCollection(name)) throw new Error(`unknown collection ${JSON.stringify(name)}`);
    if (kind === 'insert') this.insert(name, op[2] as RecordOf<typeof name>);
    else if (kind === 'update') this.#updateByKey(name, op[2], op[3] as Patch<typeof name>);
    else if (kind === 'remove') {
      const [[primaryField, spec]] = specsOf(name) as [[string, IndexSpec<RecordOf<typeof name>>]];
      const target = this.#indexes.get(name)!.get(primaryField)!.get(normalise(op[2], spec));
      if (target === undefined) throw new Error(`${name} ${JSON.stringify(op[2])} is not in the store`);
      this.remove(name, (record) => record === target);
    } else throw new Error(`unknown operation ${JSON.stringify(kind)}`);
  }

  #primaryKeyOf<C extends Collection>(collection: C, record: RecordOf<C>): string | number {
    const [[, spec]] = specsOf(collection) as [[string, IndexSpec<RecordOf<C>>]];
    return spec.key(record) as string | number;
  }

  #updateByKey<C extends Collection>(collection: C, key: string | number, patch: Patch<C>): RecordOf<C> {
    const maps = this.#indexes.get(collection)!;
    const specs = specsOf(collection);
    const [primaryField, primarySpec] = specs[0]!;
    const current = maps.get(primaryField)!.get(normalise(key, primarySpec)) as RecordOf<C> | undefined;
    if (current === undefined) throw new Error(`${collection} ${JSON.stringify(key)} is not in the store`);
    // Undefined means "leave it": JSON has no undefined, so the journal could not say anything else.
    const changes = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
    const next = { ...current, ...changes } as RecordOf<C>;
    for (const [field, spec] of specs) {
      if (!sameKey(spec.key(next), spec.key(current))) throw new Error(`${collection}.${field} cannot change`);
    }
    deepFreeze(next);
    const records = this.#db.data[collection] as RecordOf<C>[];
    const positions = this.#positionsOf(collection);
    const position = positions.get(current)!;
    records[position] = next;
    positions.delete(current);
    positions.set(next, position);
    for (const [field, spec] of specs) {
      for (const key of keysOf(next, spec)) maps.get(field)!.set(key, next);
    }
    this.#record(['update', collection, key, changes]);
    return next;
  }

  #record(op: JournalOp): void {
    if (this.#ops && !this.#replaying) this.#ops.push(op);
  }

  #scheduleWrite(): Promise<void> {
    if (!this.#pending) {
      this.#pending = deferred();
      // A microtask rather than now, so every commit of the current tick joins the first write too.
      if (!this.#writing) queueMicrotask(() => this.#startWrite());
    }
    this.#pending.commits += 1;
    return this.#pending.promise;
  }

  #startWrite(): void {
    const batch = this.#pending;
    if (!batch || this.#writing) return;
    this.#pending = null;
    this.#writing = this.#persist()
      .then(() => {
        this.#acknowledged += batch.commits;
        batch.resolve();
      }, batch.reject)
      .finally(() => {
        this.#writing = null;
        if (this.#pending) this.#startWrite();
      });
  }

  /** Makes everything in memory durable: one journal append, or a compaction when one is due. */
  async #persist(): Promise<void> {
    if (!this.#snapshot) return;
    const ops = this.#ops!;
    this.#ops = [];
    const journal = this.#journal;
    if (this.#mustCompact || !journal || journal.bytes >= Math.max(this.#minCompactionBytes, this.#snapshot.bytes)) {
      await this.#compact();
      return;
    }
    if (ops.length === 0) return;
    try {
      await journal.append(ops);
    } catch (error) {
      // The append may have left part of a line: only a compaction (which memory still allows) can repair that.
      this.#mustCompact = true;
      throw error;
    }
    this.#fileWrites += 1;
  }

  /**
   * Writes the whole state as a new JSON file for the next journal generation, then starts that journal. A crash
   * between the two leaves a journal of the previous generation, which the snapshot already contains.
   */
  async #compact(): Promise<void> {
    this.#mustCompact = true;
    const replacedStates = this.#replacedStates;
    // Everything recorded so far is in the snapshot, which is serialised synchronously as the write starts.
    this.#ops = [];
    const generation = this.#db.data.journal + 1;
    this.#db.data.journal = generation;
    await this.#db.write();
    const previous = this.#journal;
    this.#journal = null;
    await previous?.close().catch(() => undefined);
    this.#journal = await Journal.create(journalFileOf(this.file!), generation);
    // A state replaced after memory was serialised above is not in this file: the next write compacts again.
    this.#mustCompact = this.#replacedStates !== replacedStates;
    this.#fileWrites += 1;
    this.#compactions += 1;
  }

  #positionsOf(collection: Collection): Map<unknown, number> {
    let positions = this.#positions.get(collection);
    if (!positions) {
      positions = new Map((this.#db.data[collection] as unknown[]).map((record, i) => [record, i]));
      this.#positions.set(collection, positions);
    }
    return positions;
  }

  #buildIndexes(): void {
    this.#positions.clear();
    for (const collection of collections) {
      const maps = new Map<string, Map<string, unknown>>();
      const records = this.#db.data[collection] as unknown[];
      for (const record of records) deepFreeze(record);
      for (const [field, spec] of specsOf(collection)) {
        const map = new Map<string, unknown>();
        for (const record of records) {
          for (const key of keysOf(record, spec as IndexSpec<unknown>)) {
            if (map.has(key)) {
              throw new StoreCorruptError(
                `${this.file ?? 'the store'}: ${collection}.${field} ${JSON.stringify(key)} appears more than once`,
              );
            }
            map.set(key, record);
          }
        }
        maps.set(field, map);
      }
      this.#indexes.set(collection, maps);
    }
  }
}

/** Prunes in a commit of its own; the HTTP layer schedules this. */
export function pruneStore(store: Store, nowSeconds = Math.floor(Date.now() / 1000)): Promise<PruneResult> {
  return store.commit(() => store.prune(nowSeconds));
}

export function freshData(): StoreData {
  return {
    version: SCHEMA_VERSION,
    journal: 0,
    secrets: { session_key: randomBytes(32).toString('base64url') },
    sequences: { users: 0, groups: 0, projects: 0, applications: 0, personal_access_tokens: 0 },
    users: [],
    groups: [],
    projects: [],
    applications: [],
    personal_access_tokens: [],
    authorization_codes: [],
    access_tokens: [],
    notification_settings: [],
    sessions: [],
    notification_events: [],
    outbox: [],
  };
}

/** A store in memory over `data` (taken over and frozen): what tests and tools use to query data they built. */
export function memoryStoreOf(data: StoreData): Store {
  return new Store(new Low<StoreData>(new Memory<StoreData>(), data), null, null);
}

export async function openStore({ file, minCompactionBytes }: OpenStoreOptions): Promise<Store> {
  if (file === null) return memoryStoreOf(freshData());
  const path = resolve(file);
  await mkdir(dirname(path), { recursive: true }).catch((error: unknown) => {
    throw new StoreAccessError(`cannot create the directory ${dirname(path)} for the data file ${path} (${accessProblem(error)}); choose another --data`);
  });
  const lock = await FileLock.acquire(path);
  try {
    const adapter = new DurableJsonFile<StoreData>(path);
    const { data, journal, upgraded } = await readDurable(adapter);
    const store = new Store(new Low<StoreData>(adapter, data), path, lock, minCompactionBytes);
    await store.attachJournal(journal, upgraded);
    reportStatsOnSignal(store);
    return store;
  } catch (error) {
    await lock.release();
    throw error;
  }
}

/** The snapshot and journal as found on disk, both checked; a missing snapshot reads as a fresh store. */
async function readDurable(adapter: DurableJsonFile<StoreData>) {
  const path = adapter.file;
  let read: unknown;
  try {
    read = await adapter.read();
  } catch (error) {
    throw new StoreCorruptError(`cannot read the data file ${path}: ${(error as Error).message}; it was left unchanged`, {
      cause: error,
    });
  }
  const upgraded = read !== null && upgradeIfOlder(read);
  const data = read === null ? freshData() : checkShape(read, path);
  let journal: Awaited<ReturnType<typeof Journal.read>>;
  try {
    journal = await Journal.read(journalFileOf(path));
  } catch (error) {
    if (!(error instanceof JournalCorruptError)) throw error;
    throw new StoreCorruptError(`${error.message}; it and the data file ${path} were left unchanged`, { cause: error });
  }
  // A journal continues its snapshot, so it is in the snapshot's version.
  if (upgraded && journal) journal = { ...journal, ops: journal.ops.map(upgradeOp) };
  if (journal) journal = { ...journal, ops: journal.ops.map(opWithAddedFields) };
  return { data, journal, upgraded };
}

/**
 * The state a store on `file` would open with (the JSON file with its journal applied), read without taking the
 * lock and without writing: for checks and tests while a server runs.
 */
export async function readDurableData(file: string): Promise<StoreData> {
  const path = resolve(file);
  for (let attempt = 1; ; attempt++) {
    const { data, journal } = await readDurable(new DurableJsonFile<StoreData>(path));
    // A journal newer than the file read a moment before means a compaction finished in between: read again.
    if (journal && journal.generation > data.journal && attempt < 5) continue;
    const store = memoryStoreOf(data);
    if (journal && journal.generation === data.journal) store.replay(journal.ops, journalFileOf(path));
    return store.data;
  }
}

/**
 * With TOKENBELL_STORE_STATS=FILE, SIGUSR2 writes the store's commit and file-write counts to FILE as JSON, so a
 * benchmark can see how commits coalesce in a server it runs as a separate process. Off unless asked for.
 */
function reportStatsOnSignal(store: Store): void {
  const target = process.env.TOKENBELL_STORE_STATS;
  if (!target) return;
  process.on('SIGUSR2', () => {
    const temp = `${target}.${process.pid}.tmp`;
    // Written whole and renamed, so the reader never sees half a file.
    writeFileSync(temp, JSON.stringify(store.stats));
    renameSync(temp, target);
  });
}

/**
 * Upgrades the content of a data file of an earlier version in place (upgrade.ts), answering whether it did. Version 1
 * files predate the journal and read as generation 0. A version this code does not know is left to checkShape.
 */
function upgradeIfOlder(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const data = value as Record<string, unknown>;
  if (data.version === 1 && data.journal === undefined) data.journal = 0;
  else if (data.version !== 2) return false;
  upgradeData(data);
  data.version = SCHEMA_VERSION;
  return true;
}

function checkShape(value: unknown, path: string): StoreData {
  const corrupt = (why: string) => new StoreCorruptError(`the data file ${path} ${why}; it was left unchanged`);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw corrupt('is not a JSON object');
  const data = value as Record<string, unknown>;
  if (data.version !== SCHEMA_VERSION) {
    throw new StoreVersionError(
      `the data file ${path} has schema version ${JSON.stringify(data.version)}, but this tokenbell reads version ${SCHEMA_VERSION}; it was left unchanged`,
    );
  }
  const secrets = data.secrets as Record<string, unknown> | undefined;
  if (typeof secrets !== 'object' || secrets === null || typeof secrets.session_key !== 'string') {
    throw corrupt('has no secrets.session_key');
  }
  const sequences = data.sequences as Record<string, unknown> | undefined;
  for (const name of Object.keys(freshData().sequences)) {
    if (typeof sequences !== 'object' || sequences === null || !Number.isInteger(sequences[name])) {
      throw corrupt(`has no integer sequences.${name}`);
    }
  }
  // Collections added within version 3 start empty in files written before them.
  for (const collection of ['notification_events', 'outbox']) data[collection] ??= [];
  for (const collection of collections) {
    if (!Array.isArray(data[collection])) throw corrupt(`has no array "${collection}"`);
  }
  // Fields added within version 3 read as their default in records written before them.
  for (const collection of collectionsWithAddedFields) data[collection] = (data[collection] as unknown[]).map((record) => withAddedFields(collection, record));
  if (!Number.isSafeInteger(data.journal) || (data.journal as number) < 0) throw corrupt('has no journal generation');
  return value as StoreData;
}

interface Deferred {
  promise: Promise<void>;
  /** How many commits wait on this write. */
  commits: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject, commits: 0 };
}
