// How the file store's commits become durable (store.ts): commits made while a write is in flight share the next one,
// and each write is one journal append, or a compaction when one is due. Apart from the Store, which keeps the state
// and its indexes in memory and hands every operation it makes to this writer.
import type { Low } from 'lowdb';
import { DurableJsonFile } from './durable-json-file.js';
import { Journal, journalFileOf, type JournalOp } from './journal.js';
import type { StoreData } from './schema.js';

/**
 * Commits acknowledged (durable), durable writes made for them (journal appends and compactions), and compactions
 * alone. Acknowledged per write is how many commits one write carries, which is what keeps durable writes cheap under
 * load.
 */
export interface WriteStats {
  acknowledged: number;
  fileWrites: number;
  compactions: number;
}

export class Writer {
  readonly #db: Low<StoreData>;
  readonly #file: string | null;
  /** The snapshot's adapter; null for a memory store. */
  readonly #snapshot: DurableJsonFile<StoreData> | null;
  readonly #minCompactionBytes: number;
  #journal: Journal | null = null;
  /** Set when the journal may not match memory (a failed append or compaction, a replaced state): the next write compacts. */
  #mustCompact = false;
  /** States replaced so far: a compaction that serialised memory before the latest one must not clear #mustCompact. */
  #replacedStates = 0;
  /** Operations made since the last journal append; null for a memory store, which keeps none. */
  #ops: JournalOp[] | null;
  /** Commits waiting for the next write. */
  #pending: Deferred | null = null;
  #writing: Promise<void> | null = null;
  #acknowledged = 0;
  #fileWrites = 0;
  #compactions = 0;

  constructor(db: Low<StoreData>, file: string | null, minCompactionBytes: number) {
    this.#db = db;
    this.#file = file;
    this.#minCompactionBytes = minCompactionBytes;
    this.#snapshot = db.adapter instanceof DurableJsonFile ? (db.adapter as DurableJsonFile<StoreData>) : null;
    this.#ops = this.#snapshot ? [] : null;
  }

  /** Keeps an operation for the next journal append. */
  record(op: JournalOp): void {
    this.#ops?.push(op);
  }

  /** The whole state was replaced, which no journal line can say: the next write compacts. */
  stateReplaced(): void {
    this.#replacedStates += 1;
    this.#mustCompact = true;
  }

  /**
   * Continues the journal on disk, when it continues the snapshot and holds nothing yet; else folds everything into a
   * new JSON file and starts a fresh journal.
   */
  async start(continueJournal: boolean): Promise<void> {
    if (continueJournal) this.#journal = await Journal.reopen(journalFileOf(this.#file!));
    else await this.#compact();
  }

  get stats(): WriteStats {
    return { acknowledged: this.#acknowledged, fileWrites: this.#fileWrites, compactions: this.#compactions };
  }

  /** Resolves once every commit made so far is durable. */
  async flush(): Promise<void> {
    while (this.#pending || this.#writing) {
      await (this.#pending?.promise ?? this.#writing)!.catch(() => undefined);
    }
  }

  /** Waits for pending writes and folds the journal into the JSON file, so that the file alone is the whole state. */
  async close(): Promise<void> {
    try {
      await this.flush();
      const unfolded = this.#mustCompact || !this.#journal || this.#journal.bytes > 0 || (this.#ops?.length ?? 0) > 0;
      if (this.#snapshot && unfolded) await this.#compact();
    } finally {
      await this.#journal?.close().catch(() => undefined);
      this.#journal = null;
    }
  }

  /** Resolves once a write holding every change made so far is durable (`Store.commit`). */
  schedule(): Promise<void> {
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
    this.#journal = await Journal.create(journalFileOf(this.#file!), generation);
    // A state replaced after memory was serialised above is not in this file: the next write compacts again.
    this.#mustCompact = this.#replacedStates !== replacedStates;
    this.#fileWrites += 1;
    this.#compactions += 1;
  }
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
