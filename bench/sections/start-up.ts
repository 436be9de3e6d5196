// Cold start: spawn to the first answered request, for `tokenbell --memory` on the contract suite's seed (what a
// test suite starts) and for the server on the 1k-user JSON file. The PostgreSQL cold start is the postgres section's.
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { administrator, writeContractSeed } from '../../test/contract/seed.js';
import type { Run } from '../lib/config.js';
import { figures, record, recordMedian } from '../lib/figures.js';
import { type Target, waitFor200, waitForListening } from '../lib/processes.js';
import { bearer, pat, readPath } from '../lib/requests.js';
import { startSeeded, startServer } from '../lib/servers.js';
import type { GeneratedStore } from '../lib/store.js';

/**
 * Split into spawn -> listening, the first request and the same one again; returns the last file server started,
 * still running, for the read and SDK sections.
 */
export async function coldStart({ config, work }: Run, store: GeneratedStore): Promise<Target> {
  const seed = await writeContractSeed(work);
  let last: Target | undefined;
  for (const kind of ['memory', 'file'] as const) {
    const totals: number[] = [];
    const listens: number[] = [];
    const firsts: number[] = [];
    const seconds: number[] = [];
    for (let i = 0; i < config.coldStarts; i++) {
      await last?.stop();
      let target: Target;
      let headers: Record<string, string>;
      if (kind === 'memory') {
        target = await startSeeded(seed);
        headers = pat(administrator.pat);
      } else {
        const file = join(work, `cold-${i}.json`);
        await copyFile(store.file, file);
        target = await startServer('reference server', file);
        headers = bearer(store.accessTokens[0]!);
      }
      await waitForListening(target);
      const listening = performance.now();
      // The first request pays for whatever the server still defers to it (the validator's checks are compiled
      // before listening); the second shows the steady cost of the same request.
      const answered = await waitFor200(target, readPath, headers);
      const again = performance.now();
      await waitFor200(target, readPath, headers);
      seconds.push(performance.now() - again);
      totals.push(answered - target.spawnedAt);
      listens.push(listening - target.spawnedAt);
      firsts.push(answered - listening);
      last = target;
    }
    recordMedian(`cold.${kind}.spawn_to_first_200_ms`, totals);
    recordMedian(`cold.${kind}.spawn_to_listening_ms`, listens);
    recordMedian(`cold.${kind}.first_request_ms`, firsts);
    recordMedian(`cold.${kind}.second_request_ms`, seconds);
  }
  record('ratio.cold_first_vs_second_request', figures['cold.memory.first_request_ms']! / figures['cold.memory.second_request_ms']!);
  return last!;
}
