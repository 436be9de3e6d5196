// Item 7 of issue 20: resident memory of the token endpoint's four targets, after start and after mixed requests.
import { join } from 'node:path';
import type { TestCluster } from '../../test/support/postgres.js';
import type { Run } from '../lib/config.js';
import { figures, log, notes, record } from '../lib/figures.js';
import { Pool, load, roundRobin } from '../lib/load.js';
import { storeDatabase } from '../lib/postgres.js';
import { type Target, rssMiB, waitFor200 } from '../lib/processes.js';
import { bearer, formPost, readPath } from '../lib/requests.js';
import { startCeiling, startPeer, startPostgresServer, startServer } from '../lib/servers.js';
import { generateStore } from '../lib/store.js';
import { type TokenKey, auth } from './token-endpoint.js';

/**
 * Resident memory of each server after start and after up to `memoryRequests` mixed requests (half refresh grants,
 * half introspections, at 50 connections; a slow server stops at `memorySeconds` and the count says how many it
 * served), each on a fresh process: tokenbell on its file and on PostgreSQL, node-oidc-provider, bare Express. Every
 * server holds the same pool of refresh tokens before the "after start" reading (written into tokenbell's store,
 * minted into the peer's memory).
 */
export async function memoryBenchmark({ config, work }: Run, cluster: TestCluster): Promise<void> {
  const half = config.memoryRequests / 2;
  log(`memory: up to ${config.memoryRequests} mixed requests per server, at most ${config.memorySeconds} s each`);
  const store = await generateStore(join(work, 'memory.json'), { users: 1_000, refreshTokens: half + 1_000 });
  const databaseUrl = await storeDatabase(cluster, store.file);
  const measure = async (key: TokenKey, target: Target, refresh: () => string, access: () => string, paths: { token: string; introspect: string }) => {
    record(`rss.${key}.after_start_mib`, rssMiB(target.pid));
    // Batches of up to 1,000 (a refresh batch, then an introspection batch) until the count is reached or the time is up:
    // rates do not matter here, only how many requests the process served before the reading.
    let served = 0;
    const until = performance.now() + config.memorySeconds * 1000;
    const batch = Math.min(1_000, half);
    while (served < config.memoryRequests && performance.now() < until) {
      for (const [path, body] of [[paths.token, () => ({ grant_type: 'refresh_token', refresh_token: refresh() })], [paths.introspect, () => ({ token: access() })]] as const) {
        const result = await load({ url: target.url, connections: 50, amount: batch, requests: formPost(path, body, auth) });
        served += result.ok;
        if (result.failed > 0) notes.push(`memory: ${key} ${path}: ${result.failed} failed (statuses ${JSON.stringify(result.statuses)})`);
      }
    }
    record(`rss.${key}.after_mixed_mib`, rssMiB(target.pid));
    record(`rss.${key}.requests`, served);
    await target.stop();
  };
  const file = await startServer('memory server (file)', store.file);
  await waitFor200(file, readPath, bearer(store.accessTokens[0]!), 60_000);
  await measure('file', file, new Pool([...store.refreshTokens], 'memory file').take, roundRobin(store.accessTokens), { token: '/oauth/token', introspect: '/oauth/introspect' });
  const postgres = await startPostgresServer('memory server (PostgreSQL)', databaseUrl);
  await waitFor200(postgres, readPath, bearer(store.accessTokens[0]!), 60_000);
  await measure('postgres', postgres, new Pool([...store.refreshTokens], 'memory PostgreSQL').take, roundRobin(store.accessTokens), { token: '/oauth/token', introspect: '/oauth/introspect' });
  const peer = await startPeer();
  const minted = await peer.mint(half + 1_000, 1_000);
  await measure('peer', peer.target, new Pool(minted.refreshTokens, 'memory peer').take, roundRobin(minted.accessTokens), { token: '/token', introspect: '/token/introspection' });
  const forms = { '/oauth/token': { access_token: 'x', token_type: 'Bearer', expires_in: 7200, refresh_token: 'y', scope: 'api', created_at: 0 }, '/oauth/introspect': { active: true } };
  const ceiling = await startCeiling('bare Express (memory)', ['{}', JSON.stringify(forms)]);
  await waitFor200(ceiling, readPath, {}, 60_000);
  await measure('ceiling', ceiling, () => store.refreshTokens[0]!, () => store.accessTokens[0]!, { token: '/oauth/token', introspect: '/oauth/introspect' });
  // One reading each, so a ratio of the two rather than a median of rounds.
  record('ratio.rss_after_start.file_vs_ceiling', figures['rss.file.after_start_mib']! / figures['rss.ceiling.after_start_mib']!);
}
