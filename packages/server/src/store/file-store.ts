// The server's whole state lives in one JSON document held in memory (lowdb). Readers use `store.data` directly;
// every change goes through `store.commit`, which runs synchronously (so the event loop serialises concurrent
// requests without locks) and resolves once a durable write containing the change is on disk.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Low, Memory, type Adapter } from 'lowdb';
import { DurableJsonFile } from './durable-json-file.js';
import { SCHEMA_VERSION, type NotificationSettingRecord, type StoreData } from './schema.js';

export class StoreLockedError extends Error {
  override name = 'StoreLockedError';
}
export class StoreCorruptError extends Error {
  override name = 'StoreCorruptError';
}
export class StoreVersionError extends Error {
  override name = 'StoreVersionError';
}
export class StoreClosedError extends Error {
  override name = 'StoreClosedError';
}

/** The array-valued members of StoreData. */
export type Collection = { [K in keyof StoreData]: StoreData[K] extends readonly unknown[] ? K : never }[keyof StoreData];
export type RecordOf<C extends Collection> = StoreData[C][number];
export type Sequence = keyof StoreData['sequences'];

interface IndexSpec<R> {
  key: (record: R) => string | number | null;
  /** Logins, e-mail addresses and paths are matched whatever their case, as the hosted service does. */
  caseInsensitive?: boolean;
}
type IndexSpecs = { [C in Collection]: Record<string, IndexSpec<RecordOf<C>>> };

/** The composite key of a notification setting; `source_id` is null for the global setting. */
export function notificationSettingKey(
  userId: number,
  sourceType: NotificationSettingRecord['source_type'],
  sourceId: number | null,
): string {
  return `${userId}:${sourceType}:${sourceId ?? ''}`;
}

// Every index is unique. Indexed fields never change after insert, so insert/remove are the only maintenance.
const indexSpecs = {
  users: {
    id: { key: (u) => u.id },
    username: { key: (u) => u.username, caseInsensitive: true },
    email: { key: (u) => u.email, caseInsensitive: true },
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
  personalAccessTokens: {
    id: { key: (t) => t.id },
    tokenDigest: { key: (t) => t.tokenDigest },
  },
  authorizationCodes: {
    codeDigest: { key: (c) => c.codeDigest },
  },
  accessTokens: {
    id: { key: (t) => t.id },
    tokenDigest: { key: (t) => t.tokenDigest },
    refreshDigest: { key: (t) => t.refreshDigest },
  },
  notificationSettings: {
    key: { key: (s) => notificationSettingKey(s.user_id, s.source_type, s.source_id) },
  },
  sessions: {
    sid: { key: (s) => s.sid },
  },
} satisfies IndexSpecs;

export type IndexField<C extends Collection> = keyof (typeof indexSpecs)[C] & string;

const collections = Object.keys(indexSpecs) as Collection[];

function normalise(value: string | number, spec: IndexSpec<never>): string {
  const text = String(value);
  return spec.caseInsensitive ? text.toLowerCase() : text;
}

export interface PruneResult {
  authorizationCodes: number;
  accessTokens: number;
  sessions: number;
}

const DAY = 24 * 60 * 60;

export interface OpenStoreOptions {
  /** The JSON data file, or null for a store that lives only in memory (tests). */
  file: string | null;
}

export class Store {
  readonly file: string | null;
  /** The lowdb adapter; a DurableJsonFile for file stores (its `writes` counts completed writes). */
  readonly adapter: Adapter<StoreData>;
  readonly #db: Low<StoreData>;
  readonly #indexes = new Map<Collection, Map<string, Map<string, unknown>>>();
  readonly #lock: FileLock | null;
  /** Commits waiting for the next write. */
  #pending: Deferred | null = null;
  #writing: Promise<void> | null = null;
  #closed = false;
  #acknowledged = 0;
  #fileWrites = 0;

  /** @internal use openStore */
  constructor(db: Low<StoreData>, file: string | null, lock: FileLock | null) {
    this.#db = db;
    this.adapter = db.adapter;
    this.file = file;
    this.#lock = lock;
    this.#buildIndexes();
  }

  /** The live data. Read it freely; change it only inside `commit`. */
  get data(): StoreData {
    return this.#db.data;
  }

  /**
   * Runs `mutate` now, synchronously, then resolves with its result once a file write containing the change is on
   * disk. Commits made while a write is in flight share the next write, so a burst of N commits costs about two
   * writes rather than N.
   *
   * If `mutate` throws, this commit writes nothing and the error propagates. Changes it made before throwing stay
   * in memory (and reach the file with the next commit), so callers validate everything first and only then
   * mutate: a throw must never leave a half-change. `mutate` must not be async: the event loop is what serialises
   * commits. If the write itself fails, every commit sharing it rejects; the changes stay in memory and the next
   * successful write carries them.
   */
  async commit<T>(mutate: (data: StoreData) => T): Promise<T> {
    if (this.#closed) throw new StoreClosedError(`the store${this.file ? ` for ${this.file}` : ''} is closed`);
    const result = mutate(this.#db.data);
    await this.#scheduleWrite();
    return result;
  }

  /** Appends a record and indexes it (inside `commit`). Throws, changing nothing, if a unique key is taken. */
  insert<C extends Collection>(collection: C, record: RecordOf<C>): RecordOf<C> {
    const specs = indexSpecs[collection] as Record<string, IndexSpec<RecordOf<C>>>;
    const maps = this.#indexes.get(collection)!;
    const keys: Array<[Map<string, unknown>, string]> = [];
    for (const [field, spec] of Object.entries(specs)) {
      const raw = spec.key(record);
      if (raw === null) continue;
      const key = normalise(raw, spec);
      const map = maps.get(field)!;
      if (map.has(key)) throw new Error(`${collection}.${field} ${JSON.stringify(key)} already exists`);
      keys.push([map, key]);
    }
    for (const [map, key] of keys) map.set(key, record);
    (this.#db.data[collection] as RecordOf<C>[]).push(record);
    return record;
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
      const specs = indexSpecs[collection] as Record<string, IndexSpec<RecordOf<C>>>;
      const maps = this.#indexes.get(collection)!;
      for (const record of removed) {
        for (const [field, spec] of Object.entries(specs)) {
          const raw = spec.key(record);
          if (raw !== null) maps.get(field)!.delete(normalise(raw, spec));
        }
      }
    }
    return removed;
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
    this.#db.data.sequences[sequence] += 1;
    return this.#db.data.sequences[sequence];
  }

  /**
   * Drops what can never be used again (inside `commit`, or through `pruneStore`): authorization codes expired
   * more than a day ago, access tokens revoked or expired more than a day ago whose refresh token is unusable too,
   * and expired sessions. The day of grace keeps records around for error messages and replay detection.
   */
  prune(nowSeconds: number): PruneResult {
    const cutoff = nowSeconds - DAY;
    return {
      authorizationCodes: this.remove('authorizationCodes', (c) => c.expires_at < cutoff).length,
      accessTokens: this.remove('accessTokens', (t) =>
        // Revoking a record revokes its refresh token as well; otherwise a refresh token lives until used.
        t.revoked_at !== null ? t.revoked_at < cutoff : t.refreshDigest === null && t.created_at + t.expires_in < cutoff,
      ).length,
      sessions: this.remove('sessions', (s) => s.expires <= nowSeconds * 1000).length,
    };
  }

  /**
   * Commits acknowledged (their write is on disk) and file writes made for them. Their ratio is how many commits
   * one write carries, which is what keeps durable writes cheap under load.
   */
  get stats(): { acknowledged: number; fileWrites: number } {
    return { acknowledged: this.#acknowledged, fileWrites: this.#fileWrites };
  }

  /** Resolves once every commit made so far is on disk. */
  async flush(): Promise<void> {
    while (this.#pending || this.#writing) {
      await (this.#pending?.promise ?? this.#writing)!.catch(() => undefined);
    }
  }

  /** Waits for pending writes, then releases the lock. Later commits fail. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.flush();
    } finally {
      await this.#lock?.release();
    }
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
    this.#writing = this.#db
      .write()
      .then(() => {
        this.#fileWrites += 1;
        this.#acknowledged += batch.commits;
        batch.resolve();
      }, batch.reject)
      .finally(() => {
        this.#writing = null;
        if (this.#pending) this.#startWrite();
      });
  }

  #buildIndexes(): void {
    for (const collection of collections) {
      const specs = indexSpecs[collection] as Record<string, IndexSpec<unknown>>;
      const maps = new Map<string, Map<string, unknown>>();
      for (const [field, spec] of Object.entries(specs)) {
        const map = new Map<string, unknown>();
        for (const record of this.#db.data[collection] as unknown[]) {
          const raw = spec.key(record);
          if (raw === null) continue;
          const key = normalise(raw, spec);
          if (map.has(key)) {
            throw new StoreCorruptError(
              `${this.file ?? 'the store'}: ${collection}.${field} ${JSON.stringify(key)} appears more than once`,
            );
          }
          map.set(key, record);
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
    secrets: { sessionKey: randomBytes(32).toString('base64url') },
    sequences: { users: 0, groups: 0, projects: 0, applications: 0, personalAccessTokens: 0 },
    users: [],
    groups: [],
    projects: [],
    applications: [],
    personalAccessTokens: [],
    authorizationCodes: [],
    accessTokens: [],
    notificationSettings: [],
    sessions: [],
  };
}

export async function openStore({ file }: OpenStoreOptions): Promise<Store> {
  if (file === null) {
    const data = freshData();
    const db = new Low<StoreData>(new Memory<StoreData>(), data);
    return new Store(db, null, null);
  }
  const path = resolve(file);
  await mkdir(dirname(path), { recursive: true });
  const lock = await FileLock.acquire(path);
  try {
    const adapter = new DurableJsonFile<StoreData>(path);
    let data: StoreData;
    let read: unknown;
    try {
      read = await adapter.read();
    } catch (error) {
      throw new StoreCorruptError(`cannot read the data file ${path}: ${(error as Error).message}; it was left unchanged`, {
        cause: error,
      });
    }
    if (read === null) {
      data = freshData();
      await adapter.write(data);
    } else {
      data = checkShape(read, path);
    }
    const store = new Store(new Low<StoreData>(adapter, data), path, lock);
    reportStatsOnSignal(store);
    return store;
  } catch (error) {
    await lock.release();
    throw error;
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
  if (typeof secrets !== 'object' || secrets === null || typeof secrets.sessionKey !== 'string') {
    throw corrupt('has no secrets.sessionKey');
  }
  const sequences = data.sequences as Record<string, unknown> | undefined;
  for (const name of Object.keys(freshData().sequences)) {
    if (typeof sequences !== 'object' || sequences === null || !Number.isInteger(sequences[name])) {
      throw corrupt(`has no integer sequences.${name}`);
    }
  }
  for (const collection of collections) {
    if (!Array.isArray(data[collection])) throw corrupt(`has no array "${collection}"`);
  }
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

/**
 * One writer per data file: two servers on one file would each overwrite the other's changes. The lock file holds
 * the owner's pid, so a lock left by a crashed process is recognised and taken over.
 */
class FileLock {
  readonly #path: string;
  readonly #onExit: () => void;
  #released = false;

  private constructor(path: string) {
    this.#path = path;
    this.#onExit = () => {
      try {
        unlinkSync(this.#path);
      } catch {
        // Nothing left to clean up.
      }
    };
    process.once('exit', this.#onExit);
  }

  static async acquire(dataFile: string): Promise<FileLock> {
    const path = `${dataFile}.lock`;
    // A few rounds: another process may take over the same stale lock between our unlink and create.
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        await writeFile(path, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
        return new FileLock(path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      let owner: number | null = null;
      try {
        owner = parsePid(await readFile(path, 'utf8'));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      if (owner !== null && isAlive(owner)) {
        throw new StoreLockedError(
          `the data file ${dataFile} is in use by process ${owner} (lock file ${path}); ` +
            'stop that process, or remove the lock file if it is not a tokenbell server',
        );
      }
      await unlink(path).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
    }
    throw new StoreLockedError(`could not take the lock ${path} for the data file ${dataFile}`);
  }

  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    process.removeListener('exit', this.#onExit);
    await unlink(this.#path).catch(() => undefined);
  }
}

function parsePid(text: string): number | null {
  const pid = Number(text.trim());
  return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
