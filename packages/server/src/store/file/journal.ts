// The store's write-ahead journal: one line of JSON per batch of commits, appended and fdatasync'ed before the
// commits are answered (writer.ts decides when). Rewriting the whole JSON file for every batch costs time in
// proportion to the store (about 50 ms for 10k users); an append costs about 1 ms whatever the store's size. The JSON
// file stays the complete state as of its last rewrite (compaction), and the journal holds what happened since.
//
// File format: a header line `{"journal":G}` naming the generation, then lines of operations. A snapshot written
// at generation G (its `journal` field) already holds every journal of an earlier generation, so a journal left
// behind by a crash between the two steps of a compaction is recognised as stale and ignored.
import { open, readFile, type FileHandle } from 'node:fs/promises';
import { writeFileDurably } from './durable-json-file.js';
import { ExplainedError } from '../../explained-error.js';

/** A change to the store, replayable against the snapshot it followed. Keys are the collection's primary key. */
export type JournalOp =
  | readonly ['insert', collection: string, record: unknown]
  | readonly ['update', collection: string, key: string | number, patch: Record<string, unknown>]
  | readonly ['remove', collection: string, key: string | number]
  | readonly ['sequence', name: string, value: number];

export interface JournalContents {
  generation: number;
  ops: JournalOp[];
}

export class JournalCorruptError extends ExplainedError {
  override name = 'JournalCorruptError';
}

export const journalFileOf = (dataFile: string) => `${dataFile}.journal`;

export class Journal {
  readonly file: string;
  #handle: FileHandle;
  #bytes: number;

  private constructor(file: string, handle: FileHandle, bytes: number) {
    this.file = file;
    this.#handle = handle;
    this.#bytes = bytes;
  }

  /** Bytes of operations since the header, which decides when a compaction pays for itself. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Replaces any journal at `file` with an empty one of `generation`, atomically and durably. */
  static async create(file: string, generation: number): Promise<Journal> {
    await writeFileDurably(file, `${JSON.stringify({ journal: generation })}\n`);
    return new Journal(file, await open(file, 'a'), 0);
  }

  /** Opens for appending a journal that `read` found holding its header alone. */
  static async reopen(file: string): Promise<Journal> {
    return new Journal(file, await open(file, 'a'), 0);
  }

  /**
   * Appends one batch's line, not yet durable: `sync` makes it so. Appends must not overlap (a line must never land
   * inside another), so the writer waits for each before the next.
   */
  async append(ops: readonly JournalOp[]): Promise<void> {
    const line = Buffer.from(`${JSON.stringify(ops)}\n`, 'utf8');
    // One write(2) for the whole line; a short write (a full disk) is finished by looping, or throws.
    for (let written = 0; written < line.length; ) {
      written += (await this.#handle.write(line, written, line.length - written)).bytesWritten;
    }
    this.#bytes += line.length;
  }

  /**
   * Makes every line appended before this call durable (fdatasync covers all of the file's data written before it),
   * including lines of appends that finished while an earlier sync was still running.
   */
  async sync(): Promise<void> {
    await this.#handle.datasync();
  }

  async close(): Promise<void> {
    await this.#handle.close();
  }

  /**
   * The journal's generation and operations, or null when there is none. A last line without its newline is a
   * batch whose append never finished, so no commit in it was answered: it is dropped. Anything else that does
   * not parse means the file was damaged and throws.
   */
  static async read(file: string): Promise<(JournalContents & { tornTail: boolean }) | null> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    const lines = text.split('\n');
    const tail = lines.pop() ?? '';
    const tornTail = tail !== '';
    const [headerLine, ...batches] = lines;
    if (headerLine === undefined) {
      // Not even the header landed: the file was being created when the process stopped.
      return { generation: -1, ops: [], tornTail };
    }
    const header = parseLine(headerLine, file, 1) as { journal?: unknown };
    if (typeof header !== 'object' || header === null || !Number.isInteger(header.journal)) {
      throw new JournalCorruptError(`the journal ${file} has no valid header line`);
    }
    const ops: JournalOp[] = [];
    batches.forEach((line, i) => {
      const batch = parseLine(line, file, i + 2);
      if (!Array.isArray(batch)) throw new JournalCorruptError(`the journal ${file} has a line ${i + 2} that is not a batch`);
      ops.push(...(batch as JournalOp[]));
    });
    return { generation: header.journal as number, ops, tornTail };
  }
}

function parseLine(line: string, file: string, number: number): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw new JournalCorruptError(`the journal ${file} has a damaged line ${number}`);
  }
}
