// Whether the test kit gives its memory back, in one process as a long suite uses it: CYCLES sequential
// startTokenbell() -> one authenticated GET -> close(), then RESETS rounds of a PUT and helpers.reset() on one more
// instance, with RSS (VmRSS) read after the first cycle, after all the cycles and after all the resets. Run with
// --expose-gc, a full collection comes before each reading, so garbage not yet collected does not pass for growth.
// The JS heap in use is read beside RSS: RSS that grows over a flat heap is native memory (buffers, the allocator's
// per-thread arenas), not objects the kit keeps.
// Prints `{"gc", "after_first_mib", "after_cycles_mib", "after_resets_mib", "heap": [the same three], "cycles_ms", "resets_ms"}`.
// `node --expose-gc kit-cycles.mjs DIST_TESTING_JS SEED_FILE CYCLES RESETS` (compiled by lib/servers.ts)
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [testingJs, seed, cycles, resets] = process.argv.slice(2) as [string, string, string, string];
const { startTokenbell } = (await import(pathToFileURL(testingJs).href)) as typeof import('../../packages/server/src/testing.js');
const gc = (globalThis as { gc?: () => void }).gc;

const heap: number[] = [];
function rssMiB(): number {
  gc?.();
  heap.push(process.memoryUsage().heapUsed / 2 ** 20);
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  if (!kb) throw new Error('no VmRSS');
  return Number(kb) / 1024;
}

async function expect200(response: Response, what: string): Promise<void> {
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${what} answered ${response.status}: ${text}`);
}

const began = performance.now();
let afterFirst = 0;
for (let i = 0; i < Number(cycles); i++) {
  const kit = await startTokenbell({ seed });
  await expect200(await fetch(`${kit.url}/api/v4/user`, { headers: { 'private-token': kit.adminToken } }), 'GET /api/v4/user');
  await kit.close();
  if (i === 0) afterFirst = rssMiB();
}
const afterCycles = rssMiB();
const cycled = performance.now();
const kit = await startTokenbell({ seed });
// A setting changed before every reset, so each one has something to put back.
const body = JSON.stringify({ level: 'custom', new_note: true });
for (let i = 0; i < Number(resets); i++) {
  const headers = { 'private-token': kit.adminToken, 'content-type': 'application/json' };
  await expect200(await fetch(`${kit.url}/api/v3/notification_settings`, { method: 'PUT', headers, body }), 'PUT notification settings');
  await kit.helpers.reset();
}
const afterResets = rssMiB();
const reset = performance.now();
await kit.close();
process.stdout.write(`${JSON.stringify({ gc: gc !== undefined, after_first_mib: afterFirst, after_cycles_mib: afterCycles, after_resets_mib: afterResets, heap, cycles_ms: cycled - began, resets_ms: reset - cycled })}\n`);
