// Cold start: spawn to the first answered request, for `tokenbell --memory` on the contract suite's seed (what a
// test suite starts; node-oidc-provider's in the same rounds) and for the server on the 1k-user JSON file; and
// `npm start` against the built CLI it runs. The PostgreSQL cold start is the postgres section's.
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { administrator, writeContractSeed } from '../../test/contract/seed.js';
import type { Run } from '../lib/config.js';
import { append, figures, log, record, recordMedian } from '../lib/figures.js';
import { type Target, freePort, startTarget, stopTree, waitFor200, waitForListening } from '../lib/processes.js';
import { bearer, pat, readPath } from '../lib/requests.js';
import { cli, peerReadyPath, root, spawnPeer, startSeeded, startServer } from '../lib/servers.js';
import type { GeneratedStore } from '../lib/store.js';

/**
 * Split into spawn -> listening, the first request and the same one again; returns the last file server started,
 * still running, for the read and SDK sections. Each round of the memory server also starts node-oidc-provider
 * (bench/targets/peer-oidc-provider.ts, compiled) to its first answer, its discovery document, for a ratio per round.
 */
export async function coldStart({ config, work }: Run, store: GeneratedStore): Promise<Target> {
  const seed = await writeContractSeed(work);
  let last: Target | undefined;
  const peerTotals: number[] = [];
  const peerRatios: number[] = [];
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
      if (kind === 'memory') {
        await last.stop();
        last = undefined;
        const { target: peer } = await spawnPeer();
        const peerTotal = (await waitFor200(peer, peerReadyPath, {})) - peer.spawnedAt;
        await peer.stop();
        peerTotals.push(peerTotal);
        peerRatios.push(totals[totals.length - 1]! / peerTotal);
      }
    }
    recordMedian(`cold.${kind}.spawn_to_first_200_ms`, totals);
    recordMedian(`cold.${kind}.spawn_to_listening_ms`, listens);
    recordMedian(`cold.${kind}.first_request_ms`, firsts);
    recordMedian(`cold.${kind}.second_request_ms`, seconds);
  }
  record('ratio.cold_first_vs_second_request', figures['cold.memory.first_request_ms']! / figures['cold.memory.second_request_ms']!);
  recordMedian('cold.peer.spawn_to_first_200_ms', peerTotals);
  recordMedian('ratio.cold_memory_vs_peer', peerRatios);
  return last!;
}

/**
 * `npm start -- --memory --port P` (TOKENBELL_DEMO=off) against `node packages/server/dist/cli/index.js --memory
 * --port P`, what it ends by running: spawn to the first 200 from /-/readiness, the two in turn in every round. The
 * bench has already built what `npm start` builds (lib/servers.ts), so each is a start with nothing changed; whatever
 * `npm start` does before the server (a build today) is what the ratio shows.
 */
export async function npmStartVsCli({ config }: Run): Promise<void> {
  log(`start-up: npm start vs the built CLI, ${config.npmStartRounds} round(s)`);
  // The same environment for both: the developer's own, with the demo off so neither writes a greeting.
  const env = { TOKENBELL_DEMO: 'off' };
  const times = new Map<string, number[]>();
  for (let i = 0; i < config.npmStartRounds; i++) {
    for (const kind of ['npm_start', 'cli'] as const) {
      const port = await freePort();
      const args = ['--memory', '--port', String(port)];
      const target =
        kind === 'npm_start'
          ? startTarget('npm start', 'npm', ['start', '--silent', '--', ...args], port, env, root)
          : startTarget('tokenbell (built CLI)', process.execPath, [cli, ...args], port, env, root);
      try {
        append(times, kind, (await waitFor200(target, '/-/readiness', {}, 180_000)) - target.spawnedAt);
      } finally {
        // npm runs the server under a shell: every process of the tree goes, not npm alone.
        await stopTree(target);
      }
    }
    const [npm, direct] = [times.get('npm_start')!, times.get('cli')!];
    append(times, 'ratio', npm[npm.length - 1]! / direct[direct.length - 1]!);
  }
  recordMedian('cold.npm_start.spawn_to_ready_ms', times.get('npm_start')!);
  recordMedian('cold.cli.spawn_to_ready_ms', times.get('cli')!);
  recordMedian('ratio.npm_start_vs_cli', times.get('ratio')!);
}
