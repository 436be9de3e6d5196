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
import { access, mkdir } from 'node:fs/promises';
import { constants, renameSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Low, Memory } from 'lowdb';
import { DurableJsonFile } from './durable-json-file.js';
import { journalFileOf, type JournalContents, type JournalOp } from './journal.js';
import type { StoreData } from './schema.js';
import { limits } from '../../config.js';
import { StoreAccessError, StoreClosedError, StoreCorruptError, accessProblem } from '../errors.js';
import { FileLock } from './lock.js';
import { pruneRecords } from './prune.js';
import { freshData, readDurable } from './read.js';
import { Writer, type WriteStats } from './writer.js';
import {
  type Collection,
  type IndexField,
  type IndexSpec,
  type Patch,
  type RecordOf,
  type Sequence,
  type StateCollection,
  collections,
  deepFreeze,
  indexSpecs,
  isCollection,
  keysOf,
  normalise,
  sameKey,
  specsOf,
  stateCollections,
} from './indexes.js';

import type { PruneResult } from '../../domain/storage/index.js';
export { StoreAccessError, StoreClosedError, StoreCorruptError, StoreLockedError, StoreVersionError } from '../errors.js';
export { notificationSettingKey } from '../../domain/storage/index.js';
export { type Collection, type IndexField, type Patch, type RecordOf, type Sequence } from './indexes.js';
export { pruneStore } from './prune.js';
export { freshData } from './read.js';

/**
 * Every collection and sequence at one moment (`captureState`), without what belongs to the instance or the file
 * rather than to the state: the secrets, the signing keys (`instanceCollections`) and the journal's generation.
 */
export type StoreState = { readonly [C in StateCollection]: readonly RecordOf<C>[] } & { readonly sequences: Readonly<StoreData['sequences']> };

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
  readonly #indexes = new Map<Collection, Map<string, Map<string, unknown>>>();
  /**
   * Where each record sits in its collection's array, for updates: finding it by scanning cost a refresh grant
   * most of its CPU once the tokens ran into tens of thousands. Built on first use, kept by inserts and updates,
   * dropped when records are removed (which scans the array anyway) or the state is replaced.
   */
  readonly #positions = new Map<Collection, Map<unknown, number>>();
  readonly #lock: FileLock | null;
  /** Journal appends, syncs and compactions, batched and overlapped (writer.ts). */
  readonly #writer: Writer;
  /** Replaying a journal applies operations without recording them again. */
  #replaying = false;
  #closed = false;

  /** @internal use openStore */
  constructor(db: Low<StoreData>, file: string | null, lock: FileLock | null, minCompactionBytes: number = limits.minCompactionBytes) {
    this.#db = db;
    this.file = file;
    this.#lock = lock;
    this.#writer = new Writer(db, file, minCompactionBytes);
    this.#buildIndexes();
  }

  /** The live data. Read it freely; change it only through the store's methods inside `commit`. */
  get data(): StoreData {
    return this.#db.data;
  }

  /**
   * Runs `mutate` now, synchronously, then resolves with its result once a write holding the change is durable.
   * Commits made while the journal is busy share the next batch (writer.ts), so a burst of N commits costs a few
   * syncs rather than N; a commit that changed nothing costs none, but waits for the batches before it.
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
    await this.#writer.schedule();
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
    for (const collection of stateCollections) state[collection] = Object.freeze([...data[collection]]);
    return Object.freeze(state) as StoreState;
  }

  /**
   * Replaces every collection and sequence with `state`'s and rebuilds the indexes (inside `commit`); the secrets, the
   * signing keys and the journal's generation stay. A journal line cannot say "replace everything", so the write
   * carrying this is a compaction, whose atomic rename leaves the file holding either the old state or this one after
   * a crash.
   */
  replaceState(state: StoreState): void {
    const data = this.#db.data;
    for (const collection of stateCollections) {
      const records = data[collection] as unknown[];
      // In place, as `remove` does: callers may hold the array. A loop, as a spread of a long array overflows the stack.
      records.length = 0;
      for (const record of state[collection]) records.push(record);
    }
    data.sequences = { ...state.sequences };
    this.#buildIndexes();
    this.#writer.stateReplaced();
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
   * Drops what can never be used again (inside `commit`, or through `pruneStore`): expired codes, tokens, sessions
   * and mail past its retention (prune.ts).
   */
  prune(nowSeconds: number): PruneResult {
    return pruneRecords(this, nowSeconds);
  }

  /** What durable writes have cost so far (WriteStats). */
  get stats(): WriteStats {
    return this.#writer.stats;
  }

  /** Resolves once every commit made so far is durable. */
  flush(): Promise<void> {
    return this.#writer.flush();
  }

  /**
   * Waits for pending writes, folds the journal into the JSON file (so the file alone is the whole state once
   * the server has stopped), then releases the lock. Later commits fail.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#writer.close();
    } finally {
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
    // An upgraded snapshot is written in the current version at once, so the file never holds two versions' worth. A
    // journal missing, stale (already in the snapshot), or holding changes is folded in and a fresh one started.
    await this.#writer.start(current && found.ops.length === 0 && !found.tornTail && !upgraded);
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
    if (!this.#replaying) this.#writer.record(op);
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
