// The writer's pipeline, watched through its journal seam: a real journal on a real file, whose syncs the test holds
// and lets go of (or fails) in any order, to see what starts while a sync runs and what gets answered when.
import { appendFile } from 'node:fs/promises';
import { Low } from 'lowdb';
import { describe, expect, it, vi } from 'vitest';
import { DurableJsonFile } from '../../../src/store/file/durable-json-file.js';
import { Journal, journalFileOf, type JournalOp } from '../../../src/store/file/journal.js';
import { freshData } from '../../../src/store/file/read.js';
import type { StoreData } from '../../../src/store/file/schema.js';
import { readDurableData } from '../../../src/store/file/store.js';
import { type JournalFile, type JournalOpener, Writer, maxSyncsInFlight } from '../../../src/store/file/writer.js';
import { useTempStores } from '../temp-store.js';

const t = useTempStores();

interface HeldSync {
  release: () => void;
  fail: (error: Error) => void;
}

/** Journals that log what the writer does with them and hold every sync until the test lets it go. */
function watchedJournals(options: { failAppend?: (n: number) => boolean } = {}) {
  const events: string[] = [];
  const syncs: HeldSync[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  let appends = 0;
  const watch = (journal: Journal): JournalFile => ({
    get bytes() {
      return journal.bytes;
    },
    async append(ops: readonly JournalOp[]) {
      const n = ++appends;
      events.push(`append ${n}`);
      if (options.failAppend?.(n)) {
        // What a full disk leaves: part of a line, then an error.
        await appendFile(journal.file, '[["sequence","us');
        throw new Error('ENOSPC: no space left on device');
      }
      await journal.append(ops);
    },
    async sync() {
      const n = syncs.length + 1;
      events.push(`sync ${n}`);
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      await journal.sync();
      try {
        await new Promise<void>((release, fail) => syncs.push({ release, fail }));
      } finally {
        inFlight -= 1;
      }
    },
    close: () => journal.close(),
  });
  const opener: JournalOpener = {
    create: async (file, generation) => {
      events.push('compaction');
      return watch(await Journal.create(file, generation));
    },
    reopen: async (file) => watch(await Journal.reopen(file)),
  };
  return { opener, events, syncs, mostInFlight: () => mostInFlight };
}

async function startWriter(opener: JournalOpener) {
  const file = t.file();
  const db = new Low<StoreData>(new DurableJsonFile<StoreData>(file), freshData());
  const writer = new Writer(db, file, 4 * 1024 * 1024, opener);
  await writer.start(false);
  writers.set(writer, db);
  return { file, writer };
}

const writers = new WeakMap<Writer, Low<StoreData>>();

/** A commit of one change, made in memory and recorded, then scheduled, as Store.commit does; `settled` tells how it ended. */
function commit(writer: Writer, value: number | null) {
  if (value !== null) {
    const data = writers.get(writer)!.data;
    data.sequences = { ...data.sequences, users: value };
    writer.record(['sequence', 'users', value]);
  }
  const outcome = { settled: '' };
  const promise = writer.schedule().then(
    () => void (outcome.settled = 'durable'),
    (error: Error) => {
      outcome.settled = `failed: ${error.message}`;
    },
  );
  return Object.assign(outcome, { promise });
}

const turns = async (n = 20) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** Two batches, the second committed while the first's sync runs: its line goes in and its own sync starts. */
async function twoOverlappingBatches() {
  const journals = watchedJournals();
  const { file, writer } = await startWriter(journals.opener);
  const first = commit(writer, 1);
  await vi.waitFor(() => expect(journals.syncs).toHaveLength(1));
  const second = commit(writer, 2);
  await vi.waitFor(() => expect(journals.syncs).toHaveLength(2));
  return { journals, file, writer, first, second };
}

describe('the writer overlaps syncs with the next batch', () => {
  it("appends and syncs a batch formed while the previous sync runs, and answers each once its own sync and the ones before it are done", async () => {
    const { journals, file, writer, first, second } = await twoOverlappingBatches();
    expect(journals.events).toEqual(['compaction', 'append 1', 'sync 1', 'append 2', 'sync 2']);
    expect(first.settled).toBe('');

    // The second sync finishing first answers nothing: the first batch is not known durable yet.
    journals.syncs[1]!.release();
    await turns();
    expect([first.settled, second.settled]).toEqual(['', '']);
    journals.syncs[0]!.release();
    await Promise.all([first.promise, second.promise]);
    expect([first.settled, second.settled]).toEqual(['durable', 'durable']);
    expect((await Journal.read(journalFileOf(file)))!.ops).toEqual([
      ['sequence', 'users', 1],
      ['sequence', 'users', 2],
    ]);
    expect(writer.stats).toMatchObject({ acknowledged: 2, appends: 2, overlappedSyncs: 1 });
  });

  it(`keeps at most ${maxSyncsInFlight} syncs in flight: a later batch appends at once and is covered by the next sync to start`, async () => {
    const journals = watchedJournals();
    const { writer } = await startWriter(journals.opener);
    const batches = [commit(writer, 1)];
    await vi.waitFor(() => expect(journals.syncs).toHaveLength(1));
    batches.push(commit(writer, 2));
    await vi.waitFor(() => expect(journals.syncs).toHaveLength(2));
    batches.push(commit(writer, 3));
    await vi.waitFor(() => expect(journals.events).toContain('append 3'));
    batches.push(commit(writer, 4));
    await vi.waitFor(() => expect(journals.events).toContain('append 4'));
    await turns();
    expect(journals.events.slice(1)).toEqual(['append 1', 'sync 1', 'append 2', 'sync 2', 'append 3', 'append 4']);

    journals.syncs[0]!.release();
    // One sync for the two lines appended while both slots were taken.
    await vi.waitFor(() => expect(journals.syncs).toHaveLength(3));
    await first(batches[0]!);
    expect(batches.map((b) => b.settled)).toEqual(['durable', '', '', '']);
    journals.syncs[1]!.release();
    journals.syncs[2]!.release();
    await Promise.all(batches.map((b) => b.promise));
    expect(batches.map((b) => b.settled)).toEqual(Array(4).fill('durable'));
    expect(journals.mostInFlight()).toBe(maxSyncsInFlight);
    expect(writer.stats).toMatchObject({ acknowledged: 4, appends: 4 });
  });

  it('answers a commit that changed nothing only with the batch before it, whose changes it may have read', async () => {
    const journals = watchedJournals();
    const { writer } = await startWriter(journals.opener);
    const changed = commit(writer, 1);
    await vi.waitFor(() => expect(journals.syncs).toHaveLength(1));
    const unchanged = commit(writer, null);
    await turns();
    expect(unchanged.settled).toBe('');
    journals.syncs[0]!.release();
    await Promise.all([changed.promise, unchanged.promise]);
    expect([changed.settled, unchanged.settled]).toEqual(['durable', 'durable']);
  });

  it('fails every batch not yet answered when a sync fails, even one whose own sync succeeded, and compacts before the next', async () => {
    const { journals, file, writer, first, second } = await twoOverlappingBatches();
    journals.syncs[1]!.release();
    await turns();
    journals.syncs[0]!.fail(new Error('EIO: i/o error, fdatasync'));
    await Promise.all([first.promise, second.promise]);
    expect([first.settled, second.settled]).toEqual(['failed: EIO: i/o error, fdatasync', 'failed: EIO: i/o error, fdatasync']);

    // Nothing more is appended after a doubtful line: the next write is a compaction, holding everything in memory.
    const third = commit(writer, 3);
    await third.promise;
    expect(third.settled).toBe('durable');
    expect(journals.events.slice(-2)).toEqual(['sync 2', 'compaction']);
    expect((await readDurableData(file)).sequences.users).toBe(3);
    await writer.close();
  });

  it('after a failed append, answers the batch before it once its sync is done, and compacts only when no sync runs', async () => {
    const journals = watchedJournals({ failAppend: (n) => n === 2 });
    const { file, writer } = await startWriter(journals.opener);
    const first = commit(writer, 1);
    await vi.waitFor(() => expect(journals.syncs).toHaveLength(1));
    const second = commit(writer, 2);
    await vi.waitFor(() => expect(second.settled).toBe('failed: ENOSPC: no space left on device'));
    const third = commit(writer, 3);
    await turns();
    // The torn line is the journal's last, and the first sync is still running: no compaction yet.
    expect(journals.events.slice(1)).toEqual(['append 1', 'sync 1', 'append 2']);
    expect((await Journal.read(journalFileOf(file)))!.tornTail).toBe(true);
    expect([first.settled, third.settled]).toEqual(['', '']);

    journals.syncs[0]!.release();
    await Promise.all([first.promise, third.promise]);
    expect([first.settled, third.settled]).toEqual(['durable', 'durable']);
    expect(journals.events.at(-1)).toBe('compaction');
    expect((await readDurableData(file)).sequences.users).toBe(3);
    await writer.close();
  });
});

/** Waits for one commit to settle. */
async function first(batch: ReturnType<typeof commit>): Promise<void> {
  await batch.promise;
}
