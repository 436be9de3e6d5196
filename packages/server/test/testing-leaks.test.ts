// startTokenbell instances are cheap to start and close in a row (issue 33, item 9): a closed instance leaves no
// handle (server, socket, timer, watcher) behind, and its memory returns, so a suite that starts one per file does
// not grow with its files. Measured in a child process of its own; see support/instance-cycles.ts.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const run = promisify(execFile);
const script = fileURLToPath(new URL('./support/instance-cycles.ts', import.meta.url));

interface Held {
  resources: string[];
  heapBytes: number;
}

it('leaves no handle behind and gives its memory back, over 40 instances', { timeout: 180_000 }, async () => {
  const { stdout } = await run(process.execPath, ['--expose-gc', '--import', 'tsx', script, '10', '40'], { timeout: 170_000 });
  const { before, warm, after } = JSON.parse(stdout) as { before: Held; warm: Held; after: Held };
  expect(after.resources).toEqual(before.resources);
  // 30 more instances after the warm-up: what one kept would add up (prom-client's runtime collectors, one GC
  // observer and event-loop monitor per instance, kept about 60 kB each: 1.8 MB here, 0.65 MB without them).
  const growth = after.heapBytes - warm.heapBytes;
  expect(growth, `the heap grew by ${(growth / 1e6).toFixed(2)} MB over 30 instances`).toBeLessThan(1_200_000);
});
