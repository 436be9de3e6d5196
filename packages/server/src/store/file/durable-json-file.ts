// A lowdb adapter whose writes survive a crash or power cut: the data file is always either the old or the new
// version, never a torn mix. lowdb's own JSONFile (steno) renames atomically but never fsyncs, so an acknowledged
// write can vanish when the machine goes down.
import { randomBytes } from 'node:crypto';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Adapter } from 'lowdb';

export class DurableJsonFile<T> implements Adapter<T> {
  readonly file: string;
  #bytes = 0;

  constructor(file: string) {
    this.file = file;
  }

  /** The length of the text last read or written, which tells the store when its journal is worth compacting. */
  get bytes(): number {
    return this.#bytes;
  }

  /** The parsed file, or null when it does not exist. A file that does not parse throws (SyntaxError). */
  async read(): Promise<T | null> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    const data = JSON.parse(text) as T;
    this.#bytes = text.length;
    return data;
  }

  async write(data: T): Promise<void> {
    // Compact JSON: the file is for the server, and stringify/write time grows with every byte.
    const text = JSON.stringify(data);
    await writeFileDurably(this.file, text);
    this.#bytes = text.length;
  }
}

/**
 * Replaces `file` with `text` so that after a crash it holds either the old or the new text, never a mix, and the
 * new one once this resolves: a temporary file beside it (0600: the store's files hold the session key and
 * credential digests), fsync'ed, renamed over it, and the directory fsync'ed.
 */
export async function writeFileDurably(file: string, text: string): Promise<void> {
  const directory = dirname(file);
  // Same directory, so the rename never crosses a file system and stays atomic.
  const temp = join(directory, `.${basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  // The rename lives in the directory entry; without this fsync it may be lost even though the data is on disk.
  await syncDirectory(directory);
}

/** Makes a rename or a new file in `directory` durable. */
export async function syncDirectory(directory: string): Promise<void> {
  let handle;
  try {
    handle = await open(directory, 'r');
  } catch (error) {
    // Some platforms (Windows) cannot open a directory at all; the rename is as durable as they allow.
    if (isUnsupported(error)) return;
    throw error;
  }
  try {
    await handle.sync();
  } catch (error) {
    if (!isUnsupported(error)) throw error;
  } finally {
    await handle.close();
  }
}

function isUnsupported(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'EISDIR' || code === 'EINVAL' || code === 'EPERM' || code === 'ENOTSUP';
}
