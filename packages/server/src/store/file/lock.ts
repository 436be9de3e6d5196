// The data file's lock: one writer per file, a stale lock of a crashed process taken over by exactly one starter.
import { randomBytes } from 'node:crypto';
import { type FileHandle, link, open, rename, unlink, writeFile } from 'node:fs/promises';
import { unlinkSync } from 'node:fs';
import { StoreAccessError, StoreLockedError, accessProblem } from '../errors.js';

/** The lock files this process holds. */
const held = new Set<string>();
/** Per lock file, the acquisition under way in this process: acquisitions of one file here take turns. */
const acquiring = new Map<string, Promise<unknown>>();

/**
 * One writer per data file: two servers on one file would each overwrite the other's changes. The lock file holds
 * the owner's pid, so a lock left by a crashed process is recognised and taken over. A lock naming this process's
 * own pid that this process does not hold is stale too: in a container the server is PID 1 at every start, so its
 * own lock, left by a SIGKILL, names it.
 */
export class FileLock {
  readonly #path: string;
  readonly #onExit: () => void;
  #released = false;

  private constructor(path: string) {
    this.#path = path;
    held.add(path);
    this.#onExit = () => {
      try {
        unlinkSync(this.#path);
      } catch {
        // Nothing left to clean up.
      }
    };
    process.once('exit', this.#onExit);
  }

  static acquire(dataFile: string): Promise<FileLock> {
    const path = `${dataFile}.lock`;
    // In turn: within one process a pid of ours in a file we do not hold then always means a previous life's.
    const turn = (acquiring.get(path) ?? Promise.resolve()).catch(() => undefined).then(() => acquireLock(dataFile, path));
    acquiring.set(path, turn);
    void turn.finally(() => acquiring.get(path) === turn && acquiring.delete(path)).catch(() => undefined);
    return turn.then(() => new FileLock(path));
  }

  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    held.delete(this.#path);
    process.removeListener('exit', this.#onExit);
    await unlink(this.#path).catch(() => undefined);
  }
}

/** Rounds of waiting for another starter's takeover to finish: a takeover takes milliseconds. */
const takeoverRounds = 200;

async function acquireLock(dataFile: string, path: string): Promise<void> {
  const content = `${process.pid}\n`;
  for (let round = 0; round < takeoverRounds; round++) {
    if (await createExclusive(path, content, dataFile)) return;
    const found = await readOwner(path);
    if (found === null) continue;
    if (found.pid !== null && isAlive(found.pid, path)) {
      throw new StoreLockedError(
        `the data file ${dataFile} is in use by process ${found.pid} (lock file ${path}); ` +
          'stop that process, or remove the lock file if it is not a tokenbell server',
      );
    }
    if (await takeOver(path, found.inode, content)) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new StoreLockedError(`could not take the lock ${path} for the data file ${dataFile}`);
}

/**
 * Creates `path` holding `content` unless it exists. Written to a temporary file first and linked into place, so
 * that nobody ever reads the lock half-written (an empty lock would look stale and be taken over).
 */
async function createExclusive(path: string, content: string, dataFile: string): Promise<boolean> {
  const temporary = await writeTemporary(path, content, dataFile);
  try {
    await link(temporary, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new StoreAccessError(
      `cannot create the lock file ${path} beside the data file ${dataFile} (${accessProblem(error)}); the lock is made by a hard link, which its file system must allow, or choose another --data`,
    );
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

async function writeTemporary(path: string, content: string, dataFile: string): Promise<string> {
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, content, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    throw new StoreAccessError(
      `cannot create the lock file ${path} beside the data file (${accessProblem(error)}); its directory must be writable by this user, or choose another --data`,
    );
  }
  return temporary;
}

/** The pid a lock file names (null when it names none) and its inode, or null when the file is gone. */
async function readOwner(path: string): Promise<{ pid: number | null; inode: number } | null> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  // Both from one open file: the pid read is the inode's, even if the name is replaced meanwhile.
  try {
    const [text, info] = await Promise.all([handle.readFile('utf8'), handle.stat()]);
    const pid = Number(text.trim());
    return { pid: Number.isSafeInteger(pid) && pid > 0 ? pid : null, inode: info.ino };
  } finally {
    await handle.close();
  }
}

/**
 * Replaces the stale file at `path` (inode `inode` when it was judged stale) with `content`, if this starter is the
 * one to claim that inode. Every starter that judged the same lock stale races to create `<path>.takeover-<inode>`;
 * only its creator replaces the lock, and only after checking that the lock is still that inode (a starter that
 * claims after the winner has finished and removed its claim finds a new inode, and loses). Deleting the stale lock
 * and creating a new one instead would let a slower starter delete the winner's fresh lock. A claim left by a
 * starter that died before replacing the lock is itself a stale file, taken over the same way.
 */
async function takeOver(path: string, inode: number, content: string, depth = 0): Promise<boolean> {
  const claim = `${path}.takeover-${inode}`;
  if (!(await createExclusive(claim, content, path))) {
    const claimant = await readOwner(claim);
    if (claimant === null || depth >= 3) return false;
    if (claimant.pid !== null && isAlive(claimant.pid, claim)) return false;
    if (!(await takeOver(claim, claimant.inode, content, depth + 1))) return false;
  }
  try {
    // Still the stale lock? Its inode may have been freed by a takeover since and reused by a live lock.
    const now = await readOwner(path);
    if (now?.inode !== inode || (now.pid !== null && isAlive(now.pid, path))) return false;
    const temporary = await writeTemporary(path, content, path);
    await rename(temporary, path);
    return true;
  } finally {
    await unlink(claim).catch(() => undefined);
  }
}

/** Whether the process a lock file names still runs and still holds it; our own pid only if we hold the file. */
function isAlive(pid: number, path: string): boolean {
  if (pid === process.pid) return held.has(path);
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
