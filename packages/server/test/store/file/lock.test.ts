// The data file's lock (store/file/lock.ts) beyond what the store's own tests show: a lock naming our own pid that we
// do not hold (a container's PID 1, restarted) is stale, and of many processes taking over one stale lock at once
// exactly one wins.
import { spawnSync } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreLockedError } from '../../../src/store/errors.js';
import { FileLock } from '../../../src/store/file/lock.js';
import { spawnProcess, type SpawnedProcess } from '../../../../../scripts/lib/processes.js';
import { tempDir } from '../../hardening/support.js';

const lockModule = new URL('../../../src/store/file/lock.ts', import.meta.url).href;
const repoRoot = fileURLToPath(new URL('../../../../../', import.meta.url));

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

/** A pid that no process has now: a child that has already ended. */
const gonePid = () => spawnSync(process.execPath, ['-e', '']).pid!;

describe('a stale lock', () => {
  it('is one naming our own pid that we do not hold, as a restarted PID 1 finds its own', async () => {
    const data = join(dir.path, 'own-pid.json');
    await writeFile(`${data}.lock`, `${process.pid}\n`);
    const lock = await FileLock.acquire(data);
    expect(await readFile(`${data}.lock`, 'utf8')).toBe(`${process.pid}\n`);
    // Held now, our pid means what it says: a second acquisition here is refused.
    await expect(FileLock.acquire(data)).rejects.toThrow(new StoreLockedError(`the data file ${data} is in use by process ${process.pid}`).message);
    await lock.release();
    await expect(readFile(`${data}.lock`)).rejects.toThrow(/ENOENT/);
  });

  it('is taken over by exactly one of many processes trying at once, and leaves no claim or temporary file', async () => {
    const data = join(dir.path, 'contended.json');
    await writeFile(`${data}.lock`, `${gonePid()}\n`);
    const go = join(dir.path, 'go');
    const done = join(dir.path, 'done');
    // Each waits for `go`, tries once, says how it went, and the winner holds the lock until `done`.
    const script = `
      import { existsSync } from 'node:fs';
      const { FileLock } = await import(${JSON.stringify(lockModule)});
      const wait = (file) => new Promise((resolve) => { const t = setInterval(() => existsSync(file) && (clearInterval(t), resolve()), 1); });
      console.log('ready');
      await wait(${JSON.stringify(go)});
      try {
        await FileLock.acquire(${JSON.stringify(data)});
        console.log('won');
        await wait(${JSON.stringify(done)});
      } catch (error) {
        console.log('lost: ' + error.message);
      }`;
    const starters: SpawnedProcess[] = Array.from({ length: 8 }, () =>
      spawnProcess(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot }),
    );
    const said = (starter: SpawnedProcess, word: RegExp) => word.test(starter.output());
    const until = async (condition: () => boolean) => {
      while (!condition()) await new Promise((r) => setTimeout(r, 10));
    };
    try {
      await until(() => starters.every((s) => said(s, /ready/) || s.child.exitCode !== null));
      await writeFile(go, '');
      await until(() => starters.every((s) => said(s, /won|lost|Error/) || s.child.exitCode !== null));
      const winners = starters.filter((s) => said(s, /won/));
      expect(winners.length, starters.map((s) => s.output()).join('\n')).toBe(1);
      const winner = winners[0]!.child.pid;
      for (const loser of starters.filter((s) => !said(s, /won/))) expect(loser.output()).toContain(`is in use by process ${winner}`);
      expect(await readFile(`${data}.lock`, 'utf8')).toBe(`${winner}\n`);
      expect((await readdir(dir.path)).filter((name) => name.startsWith('contended.json.'))).toEqual(['contended.json.lock']);
    } finally {
      await writeFile(done, '');
      await Promise.all(starters.map((s) => s.exited));
    }
  }, 60_000);
});
