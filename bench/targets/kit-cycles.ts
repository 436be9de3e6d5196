// Whether the test kit gives its memory back, in one process as a long suite uses it: CYCLES sequential
// startTokenbell() -> one authenticated GET -> close(), then RESETS rounds of a PUT and helpers.reset() on one more
// instance, with RSS (VmRSS) read after the first cycle, after all the cycles and after all the resets. Run with
// --expose-gc, a full collection comes before each reading, so garbage not yet collected does not pass for growth.
// The JS heap in use is read beside RSS, and the heap V8 has allocated: RSS that grows over a flat heap in use is
// V8's young generation growing to its working size (heap allocated) or native memory (buffers, the allocator's
// free lists), not objects the kit keeps.
// The requests go out on node:http without a keep-alive agent, as the server's own leak test sends them
// (packages/server/test/support/instance-cycles.ts): on Node 20, fetch (undici 6) keeps a connection pool for every
// origin it has met, each instance has a port of its own, and those pools (about 45 kB of heap an instance, some
// 13 MiB of RSS over 100 here) would be counted against the kit.
// Prints `{"gc", "after_first_mib", "after_cycles_mib", "after_resets_mib", "heap": [the same three], "heap_total": [the same three], "cycles_ms", "resets_ms"}`.
// `node --expose-gc kit-cycles.mjs DIST_TESTING_JS SEED_FILE CYCLES RESETS` (compiled by lib/servers.ts)
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { pathToFileURL } from 'node:url';

const [testingJs, seed, cycles, resets] = process.argv.slice(2) as [string, string, string, string];
const { startTokenbell } = (await import(pathToFileURL(testingJs).href)) as typeof import('../../packages/server/src/testing.js');
const gc = (globalThis as { gc?: () => void }).gc;

const heap: number[] = [];
const heapTotal: number[] = [];
function rssMiB(): number {
  gc?.();
  const { heapUsed, heapTotal: allocated } = process.memoryUsage();
  heap.push(heapUsed / 2 ** 20);
  heapTotal.push(allocated / 2 ** 20);
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  if (!kb) throw new Error('no VmRSS');
  return Number(kb) / 1024;
}

/** One request on a connection of its own; throws unless it is answered 200. */
function expect200(url: string, what: string, options: { method?: string; headers: Record<string, string>; body?: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${what} answered ${res.statusCode}: ${text}`))));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const began = performance.now();
let afterFirst = 0;
for (let i = 0; i < Number(cycles); i++) {
  const kit = await startTokenbell({ seed });
  await expect200(`${kit.url}/api/v4/user`, 'GET /api/v4/user', { headers: { 'private-token': kit.adminToken } });
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
  await expect200(`${kit.url}/api/v3/notification_settings`, 'PUT notification settings', { method: 'PUT', headers, body });
  await kit.helpers.reset();
}
const afterResets = rssMiB();
const reset = performance.now();
await kit.close();
process.stdout.write(`${JSON.stringify({ gc: gc !== undefined, after_first_mib: afterFirst, after_cycles_mib: afterCycles, after_resets_mib: afterResets, heap, heap_total: heapTotal, cycles_ms: cycled - began, resets_ms: reset - cycled })}\n`);
