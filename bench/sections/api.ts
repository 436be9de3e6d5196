// The API rows: authenticated reads against the bare Express ceiling and Prism, the 401 and 400 floods beside them
// on the same server, and durable writes on the 1k/10k/100k-user stores with the store's write coalescing.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config, Run } from '../lib/config.js';
import { append, figures, log, record, recordMedian, recordRounds, summarise } from '../lib/figures.js';
import { type LoadFigures, load, roundRobin } from '../lib/load.js';
import { type Target, cpuMs, freePort, rssMiB, startTarget, storeStats, waitFor200 } from '../lib/processes.js';
import { bearer, readPath, writePath, writeRequest } from '../lib/requests.js';
import { root, startCeiling, startServer } from '../lib/servers.js';
import { type GeneratedStore, generateStore } from '../lib/store.js';

export async function readBenchmark({ config }: Run, reference: Target, store: GeneratedStore): Promise<void> {
  const headers = bearer(store.accessTokens[0]!);
  const answer = await (await fetch(`${reference.url}${readPath}`, { headers })).text();
  const ceiling = await startCeiling('bare Express', [answer]);
  const prismPort = await freePort();
  const prism = startTarget(
    'Prism mock',
    process.execPath,
    [join(root, 'node_modules/@stoplight/prism-cli/dist/index.js'), 'mock', join(root, 'openapi/openapi.yaml'), '--dynamic=false', '-h', '127.0.0.1', '-p', String(prismPort), '--errors=false'],
    prismPort,
  );
  const targets = [
    { key: 'reference', target: reference },
    { key: 'ceiling', target: ceiling },
    { key: 'prism', target: prism },
  ];
  for (const { target } of targets) await waitFor200(target, readPath, headers, 120_000);
  for (const { target } of targets) {
    await load({ url: `${target.url}${readPath}`, headers, connections: 10, duration: config.warmupSeconds });
  }
  const runs = new Map<string, LoadFigures[]>();
  const ratios = new Map<string, number[]>();
  // The servers' CPU time per answered request (user and system, all threads), reference and ceiling.
  const cpuPerRequest = new Map<string, number[]>();
  for (let round = 0; round < config.rounds; round++) {
    for (const connections of config.connections) {
      const rps: Record<string, number> = {};
      const cpu: Record<string, number> = {};
      for (const { key, target } of targets) {
        log(`read round ${round + 1}/${config.rounds}: ${key}, ${connections} connections`);
        const cpuBefore = cpuMs(target.pid);
        const figures = await load({ url: `${target.url}${readPath}`, headers, connections, duration: config.seconds });
        cpu[key] = ((cpuMs(target.pid) - cpuBefore) * 1000) / Math.max(figures.ok, 1);
        const id = `read.${key}.c${connections}`;
        append(runs, id, figures);
        if (key !== 'prism') append(cpuPerRequest, `${id}.cpu_us_per_request`, cpu[key]);
        rps[key] = figures.rps;
      }
      append(ratios, `ratio.read_cpu_vs_ceiling.c${connections}`, cpu.reference! / cpu.ceiling!);
      // Ratios per round, then the median: both sides of each ratio ran back to back under the same load.
      append(ratios, `ratio.read_vs_ceiling.c${connections}`, rps.reference! / rps.ceiling!);
      append(ratios, `ratio.read_vs_prism.c${connections}`, rps.reference! / rps.prism!);
    }
  }
  await errorBenchmark(config, reference, store, runs, ratios);
  recordRounds(runs, ratios);
  for (const [id, values] of cpuPerRequest) recordMedian(id, values);
  record('rss.reference_after_read_mib', rssMiB(reference.pid));
  record('rss.prism_mib', rssMiB(prism.pid));
  await ceiling.stop();
  await prism.stop();
}

/**
 * Item 4 of issue 20: floods of unauthenticated GETs (401) and of malformed PUTs (a level outside the enum: 400 from
 * the validator) beside successful GETs, on the same server, at 50 connections, interleaved in every round.
 */
async function errorBenchmark(config: Config, reference: Target, store: GeneratedStore, runs: Map<string, LoadFigures[]>, ratios: Map<string, number[]>): Promise<void> {
  const connections = 50;
  const cases = {
    success: { url: `${reference.url}${readPath}`, headers: bearer(store.accessTokens[0]!) },
    unauthenticated_401: { url: `${reference.url}${readPath}`, expect: 401 },
    malformed_400: { url: `${reference.url}${writePath}`, method: 'PUT', headers: { ...bearer(store.accessTokens[0]!), 'content-type': 'application/json' }, body: JSON.stringify({ level: 'loudest' }), expect: 400 },
  } as const;
  for (const options of Object.values(cases)) await load({ ...options, connections, duration: config.warmupSeconds });
  for (let round = 0; round < config.rounds; round++) {
    const rps: Record<string, number> = {};
    for (const [key, options] of Object.entries(cases)) {
      log(`errors round ${round + 1}/${config.rounds}: ${key}, ${connections} connections`);
      const result = await load({ ...options, connections, duration: config.seconds });
      append(runs, `errors.${key}.c${connections}`, result);
      rps[key] = result.rps;
    }
    for (const key of ['unauthenticated_401', 'malformed_400']) {
      append(ratios, `ratio.errors_vs_success.${key}.c${connections}`, rps[key]! / rps.success!);
    }
  }
}

export async function writeBenchmark({ config, work }: Run): Promise<void> {
  const servers: Array<{ users: number; store: GeneratedStore; target: Target; statsFile: string; next: () => string }> = [];
  for (const users of config.stores) {
    log(`generating a ${users}-user store`);
    const store = await generateStore(join(work, `write-${users}.json`), { users });
    const statsFile = join(work, `stats-${users}.json`);
    // One at a time, so each start-up time is its own and not shared with loading a bigger store.
    const target = await startServer(`write server (${users} users)`, store.file, { TOKENBELL_STORE_STATS: statsFile });
    await waitFor200(target, writePath, bearer(store.accessTokens[0]!), 120_000);
    record(`write.u${users}.spawn_to_first_200_ms`, performance.now() - target.spawnedAt);
    servers.push({ users, store, target, statsFile, next: roundRobin(store.accessTokens) });
    record(`write.u${users}.store_mib`, store.bytes / 2 ** 20);
  }
  for (const s of servers) {
    log(`warming up the write server with ${s.users} users`);
    await load({ url: s.target.url, connections: 10, duration: config.warmupSeconds, requests: writeRequest(s.next) });
  }
  const runs = new Map<string, LoadFigures[]>();
  // Per store and connection count: acknowledged commits, file writes, 2xx answers, summed over the rounds.
  const counts = new Map<string, { acknowledged: number; fileWrites: number; ok: number }>();
  for (let round = 0; round < config.rounds; round++) {
    for (const connections of config.connections) {
      for (const s of servers) {
        log(`write round ${round + 1}/${config.rounds}: ${s.users} users, ${connections} connections`);
        const before = await storeStats(s.target, s.statsFile);
        const result = await load({ url: s.target.url, connections, duration: config.seconds, requests: writeRequest(s.next) });
        const after = await storeStats(s.target, s.statsFile);
        const id = `write.u${s.users}.c${connections}`;
        append(runs, id, result);
        for (const key of [id, `write.u${s.users}`]) {
          const c = counts.get(key) ?? { acknowledged: 0, fileWrites: 0, ok: 0 };
          c.acknowledged += after.acknowledged - before.acknowledged;
          c.fileWrites += after.fileWrites - before.fileWrites;
          c.ok += result.ok;
          counts.set(key, c);
        }
      }
    }
  }
  for (const [id, list] of runs) summarise(id, list);
  for (const [id, c] of counts) {
    record(`${id}.acknowledged`, c.acknowledged);
    record(`${id}.answered_2xx`, c.ok);
    record(`${id}.file_writes`, c.fileWrites);
    record(`${id}.commits_per_file_write`, c.acknowledged / c.fileWrites);
  }
  for (const s of servers) {
    record(`rss.write_u${s.users}_mib`, rssMiB(s.target.pid));
    record(`write.u${s.users}.store_after_mib`, (await stat(s.store.file)).size / 2 ** 20);
    await s.target.stop();
  }
  recordCostGrowth(config);
}

/** How the cost of a write grows from the smallest store to the largest, at the most connections. */
function recordCostGrowth(config: Config): void {
  const smallest = config.stores[0]!;
  const largest = config.stores[config.stores.length - 1]!;
  if (largest > smallest) {
    const top = Math.max(...config.connections);
    // Cost per write is 1/throughput; an exponent below 1 means it grows less than linearly with the store.
    const cost = (users: number) => 1 / figures[`write.u${users}.c${top}.rps`]!;
    record(`ratio.write_cost_growth_exponent.c${top}`, Math.log(cost(largest) / cost(smallest)) / Math.log(largest / smallest));
    record(`ratio.write_cost_${largest}_vs_${smallest}.c${top}`, cost(largest) / cost(smallest));
  }
}
