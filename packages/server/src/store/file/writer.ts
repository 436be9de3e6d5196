// How the file store's commits become durable (store.ts): commits made while the journal is busy share the next
// batch, each batch is one journal line, and the fdatasyncs that make lines durable overlap with the next batch's
// append, so a commit waits for its own batch's sync rather than for a whole earlier write first. Apart from the
// Store, which keeps the state and its indexes in memory and hands every operation it makes to this writer.
//
// Why an acknowledged commit survives a crash, with syncs overlapping:
// - Lines are in commit order: appends never overlap (the next starts once the last has returned), and a batch's
//   operations are taken from memory synchronously as its append starts, so a later commit's are in a later line.
// - A batch is answered only once a sync that started after its line was appended has succeeded, and after every
//   batch before it was answered: fdatasync covers all the file's data written before the call, so the answered
//   lines are a prefix of the journal. Answering in order also means a sync that failed (whose pages the kernel may
//   have dropped while a later sync reported success) fails every batch not yet answered.
// - So what a crash can leave after the answered prefix is unanswered lines, cut short at worst (a SIGKILL stops
//   an append part way; a file system that writes data before the size that exposes it, as ext4's default does, cuts
//   it the same way on power loss): the torn tail `Journal.read` forgives, and which no answered commit is in.
// - A failed append or sync stops all appending: the next write is a compaction, which first waits until no append
//   or sync is in flight, then writes the whole state (memory holds every change) as a new snapshot and journal
//   generation, so nothing is appended after a torn or doubtful line. `flush` waits for every batch to be answered
//   or failed, `close` then compacts, so the journal is never closed under a sync.
import type { Low } from 'lowdb';
import { DurableJsonFile } from './durable-json-file.js';
import { Journal, journalFileOf, type JournalOp } from './journal.js';
import type { StoreData } from './schema.js';

/**
 * Commits acknowledged (durable); durable writes made for them (journal syncs and compactions); compactions alone;
 * journal lines appended; and syncs started while another was still running. Acknowledged per file write is how many
 * commits one durable write carries, which is what keeps durable writes cheap under load.
 */
export interface WriteStats {
  acknowledged: number;
  fileWrites: number;
  compactions: number;
  appends: number;
  overlappedSyncs: number;
}

/** What the writer needs of a journal (journal.ts); a seam for tests that watch or hold its appends and syncs. */
export interface JournalFile {
  readonly bytes: number;
  append(ops: readonly JournalOp[]): Promise<void>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

export interface JournalOpener {
  /** A new, empty journal of `generation` at `file`, durably replacing any there. */
  create(file: string, generation: number): Promise<JournalFile>;
  /** The journal at `file`, which holds its header alone, opened for appending. */
  reopen(file: string): Promise<JournalFile>;
}

const journals: JournalOpener = { create: (file, generation) => Journal.create(file, generation), reopen: (file) => Journal.reopen(file) };

/**
 * Syncs in flight at once. Two let a batch's sync start while the previous one runs (ext4 commits the second's
 * journal transaction as soon as the first's is done, rather than after the writer hears back); a third would only
 * join the second's commit, while holding another of libuv's four threads (which scrypt and DNS share).
 */
export const maxSyncsInFlight = 2;

export class Writer {
  readonly #db: Low<StoreData>;
  readonly #file: string | null;
  /** The snapshot's adapter; null for a memory store. */
  readonly #snapshot: DurableJsonFile<StoreData> | null;
  readonly #minCompactionBytes: number;
  readonly #journals: JournalOpener;
  #journal: JournalFile | null = null;
  /** Set when the journal may not match memory (a failed append, sync or compaction, a replaced state): the next write compacts. */
  #mustCompact = false;
  /** States replaced so far: a compaction that serialised memory before the latest one must not clear #mustCompact. */
  #replacedStates = 0;
  /** Operations made since the last journal append; null for a memory store, which keeps none. */
  #ops: JournalOp[] | null;
  /** Commits waiting for the next batch. */
  #pending: Batch | null = null;
  /** Batches taken from #pending and not yet answered, in commit order. */
  readonly #unanswered: Batch[] = [];
  /** An append or a compaction in flight: either holds the journal alone. */
  #busy = false;
  /** Lines appended so far in this journal; a batch's `line` is the count once its own is in. */
  #appended = 0;
  /** Lines the syncs started so far cover. */
  #covered = 0;
  /** Lines known durable: every sync up to one covering this many has succeeded. */
  #answered = 0;
  /** Syncs in flight, oldest first; each is answered only after those before it. */
  readonly #syncs: Sync[] = [];
  /** Resolved whenever no append, sync or compaction is in flight (what a compaction waits for). */
  #drained: Deferred | null = null;
  #acknowledged = 0;
  #fileWrites = 0;
  #compactions = 0;
  #appends = 0;
  #overlappedSyncs = 0;

  constructor(db: Low<StoreData>, file: string | null, minCompactionBytes: number, opener: JournalOpener = journals) {
    this.#db = db;
    this.#file = file;
    this.#minCompactionBytes = minCompactionBytes;
    this.#journals = opener;
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
    if (continueJournal) this.#journal = await this.#journals.reopen(journalFileOf(this.#file!));
    else await this.#compact();
  }

  get stats(): WriteStats {
    return {
      acknowledged: this.#acknowledged,
      fileWrites: this.#fileWrites,
      compactions: this.#compactions,
      appends: this.#appends,
      overlappedSyncs: this.#overlappedSyncs,
    };
  }

  /** Resolves once every commit made so far is durable (or its write has failed). */
  async flush(): Promise<void> {
    for (;;) {
      // Batches are answered in order, so the newest settling means every earlier one has.
      const newest = this.#pending ?? this.#unanswered.at(-1);
      if (!newest) return;
      await newest.promise.catch(() => undefined);
    }
  }

  /** Waits for pending writes and folds the journal into the JSON file, so that the file alone is the whole state. */
  async close(): Promise<void> {
    try {
      await this.flush();
      const unfolded = this.#mustCompact || !this.#journal || this.#journal.bytes > 0 || (this.#ops?.length ?? 0) > 0;
      if (this.#snapshot && unfolded) {
        await this.#idle();
        await this.#compact();
      }
    } finally {
      await this.#idle();
      await this.#journal?.close().catch(() => undefined);
      this.#journal = null;
    }
  }

  /** Resolves once a write holding every change made so far is durable (`Store.commit`). */
  schedule(): Promise<void> {
    if (!this.#pending) {
      this.#pending = deferred();
      // A microtask rather than now, so every commit of the current tick joins the first batch too.
      queueMicrotask(() => this.#next());
    }
    this.#pending.commits += 1;
    return this.#pending.promise;
  }

  /** Starts what can start now: the pending batch's append (or compaction, once nothing is in flight), and syncs. */
  #next(): void {
    this.#startSyncs();
    const batch = this.#pending;
    if (!batch || this.#busy) return;
    if (!this.#snapshot) {
      // A memory store keeps nothing: a batch is answered once those before it are.
      this.#take(batch);
      batch.line = this.#appended;
      this.#answerCovered();
      return;
    }
    const journal = this.#journal;
    if (this.#mustCompact || !journal || journal.bytes >= Math.max(this.#minCompactionBytes, this.#snapshot.bytes)) {
      // A compaction replaces the journal, so it waits until nothing is appending to it or syncing it.
      if (this.#syncs.length > 0) return;
      this.#take(batch);
      this.#busy = true;
      this.#compact().then(
        () => this.#answerUpTo(batch),
        (error: unknown) => this.#failUnanswered(error),
      ).finally(() => this.#settled());
      return;
    }
    this.#take(batch);
    const ops = this.#ops!;
    this.#ops = [];
    if (ops.length === 0) {
      // Nothing to append, but the batch may have read changes of batches still syncing: it is answered with them.
      batch.line = this.#appended;
      this.#answerCovered();
      return;
    }
    this.#busy = true;
    journal.append(ops).then(
      () => {
        this.#appends += 1;
        batch.line = ++this.#appended;
      },
      (error: unknown) => {
        // The append may have left part of a line: nothing more may follow it, and only a compaction (which memory
        // still allows) can repair it. The lines before it are whole, and their syncs go on.
        this.#mustCompact = true;
        this.#fail(batch, error);
      },
    ).finally(() => this.#settled());
  }

  #take(batch: Batch): void {
    this.#pending = null;
    this.#unanswered.push(batch);
  }

  #settled(): void {
    this.#busy = false;
    this.#next();
    this.#checkDrained();
  }

  /** Starts a sync for the lines appended and not yet covered, while there is room for one. */
  #startSyncs(): void {
    const journal = this.#journal;
    if (!journal) return;
    while (this.#appended > this.#covered && this.#syncs.length < maxSyncsInFlight) {
      if (this.#syncs.length > 0) this.#overlappedSyncs += 1;
      const sync: Sync = { covers: this.#appended, outcome: null };
      this.#covered = this.#appended;
      this.#syncs.push(sync);
      journal.sync().then(
        () => (sync.outcome = { ok: true }),
        (error: unknown) => (sync.outcome = { ok: false, error }),
      ).finally(() => this.#syncSettled());
    }
  }

  /** Answers the syncs that settled, oldest first, each only once all before it have. */
  #syncSettled(): void {
    for (let outcome = this.#syncs[0]?.outcome; outcome; outcome = this.#syncs[0]?.outcome) {
      const { covers } = this.#syncs.shift()!;
      if (outcome.ok) {
        this.#fileWrites += 1;
        this.#answered = Math.max(this.#answered, covers);
        this.#answerCovered();
      } else {
        // After a failed fdatasync the kernel may have dropped the pages it could not write, and a later sync can
        // report success without them: no batch not yet answered can be trusted, and the journal cannot go on.
        this.#mustCompact = true;
        this.#failUnanswered(outcome.error);
      }
    }
    this.#next();
    this.#checkDrained();
  }

  /** Answers, in order, the batches whose lines are durable (a batch that appended nothing needs only those before it). */
  #answerCovered(): void {
    while (this.#unanswered.length > 0) {
      const batch = this.#unanswered[0]!;
      if (batch.line === null || batch.line > this.#answered) return;
      this.#unanswered.shift();
      this.#acknowledged += batch.commits;
      batch.resolve();
    }
  }

  /** Answers every batch up to `last` (a compaction made all of memory durable). */
  #answerUpTo(last: Batch): void {
    while (this.#unanswered.length > 0) {
      const batch = this.#unanswered.shift()!;
      this.#acknowledged += batch.commits;
      batch.resolve();
      if (batch === last) return;
    }
  }

  #fail(batch: Batch, error: unknown): void {
    const i = this.#unanswered.indexOf(batch);
    // Everything after a failed batch may have read its changes, and its line would follow a torn one: all fail.
    for (const later of i < 0 ? [] : this.#unanswered.splice(i)) later.reject(error);
  }

  #failUnanswered(error: unknown): void {
    for (const batch of this.#unanswered.splice(0)) batch.reject(error);
  }

  /** Resolves once no append, sync or compaction is in flight. */
  #idle(): Promise<void> {
    if (!this.#busy && this.#syncs.length === 0) return Promise.resolve();
    this.#drained ??= deferred();
    return this.#drained.promise;
  }

  #checkDrained(): void {
    if (this.#drained && !this.#busy && this.#syncs.length === 0) {
      const drained = this.#drained;
      this.#drained = null;
      drained.resolve();
    }
  }

  /**
   * Writes the whole state as a new JSON file for the next journal generation, then starts that journal. A crash
   * between the two leaves a journal of the previous generation, which the snapshot already contains. Runs only when
   * no append or sync is in flight.
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
    this.#journal = await this.#journals.create(journalFileOf(this.#file!), generation);
    this.#appended = this.#covered = this.#answered = 0;
    // A state replaced after memory was serialised above is not in this file: the next write compacts again.
    this.#mustCompact = this.#replacedStates !== replacedStates;
    this.#fileWrites += 1;
    this.#compactions += 1;
  }
}

interface Sync {
  /** Lines appended when it started, which it makes durable. */
  covers: number;
  outcome: { ok: true } | { ok: false; error: unknown } | null;
}

interface Batch extends Deferred {
  /** How many commits wait on this batch. */
  commits: number;
  /** Its line's number in the journal once appended (or the last line before it, when it appended none). */
  line: number | null;
}

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function deferred(): Batch {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject, commits: 0, line: null };
}
