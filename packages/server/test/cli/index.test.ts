// `tokenbell`'s entry turns on Node's module compile cache (src/cli/index.ts) where Node has it (22.8 onwards): a
// first start writes V8's code for the modules it loads to the cache directory, so that later starts read it. On
// Node 20 there is nothing to turn on, and the entry must still run.
import module from 'node:module';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { freePort, spawnProcess, stopProcess, waitForHttp } from '../../../../scripts/lib/processes.js';

const cli = inject('serverCli');
const hasCompileCache = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === 'function';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'tokenbell-compile-cache-'));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

/** Every file under `dir`, or none when it does not exist. */
const filesUnder = async (dir: string): Promise<string[]> => (await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])).filter((e) => e.isFile()).map((e) => e.name);

it(hasCompileCache ? 'caches the compiled modules of a start in the default directory, turned on by the entry itself' : 'starts on a Node without a compile cache', async () => {
  // Without NODE_COMPILE_CACHE, which would turn the cache on by itself: only the entry's call can fill the default
  // directory, which is under the temporary directory.
  const env = { TMPDIR: scratch, NODE_COMPILE_CACHE: undefined, NODE_DISABLE_COMPILE_CACHE: undefined, TOKENBELL_DEMO: 'off' };
  const port = await freePort();
  const server = spawnProcess(process.execPath, [cli, '--memory', '--host', '127.0.0.1', '--port', String(port), '--log-level', 'silent'], { env });
  try {
    await waitForHttp('tokenbell', server, `http://127.0.0.1:${port}/-/readiness`);
  } finally {
    // A clean stop: Node writes the cache as the process exits.
    await stopProcess(server.child);
  }
  const cached = await filesUnder(join(scratch, 'node-compile-cache'));
  if (hasCompileCache) expect(cached.length).toBeGreaterThan(100);
  else expect(cached).toEqual([]);
});
