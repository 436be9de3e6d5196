// The data file's lock: one writer per file, a stale lock of a crashed process taken over.
import { readFile, unlink, writeFile } from 'node:fs/promises';
import { unlinkSync } from 'node:fs';
import { StoreAccessError, StoreLockedError, accessProblem } from '../errors.js';

/**
 * One writer per data file: two servers on one file would each overwrite the other's changes. The lock file holds
 * the owner's pid, so a lock left by a crashed process is recognised and taken over.
 */
export class FileLock {
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
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
          throw new StoreAccessError(
            `cannot create the lock file ${path} beside the data file (${accessProblem(error)}); its directory must be writable by this user, or choose another --data`,
          );
        }
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
