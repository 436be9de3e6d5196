// PostgreSQL beside the file store: the same 1k-user store on the JSON file and in a durable cluster (fsync on),
// measured in interleaved rounds: authenticated reads and durable PUTs (the token endpoint on both stores is the
// token section's).
import { join } from 'node:path';
import type { TestCluster } from '../../test/support/postgres.js';
import type { Run } from '../lib/config.js';
import { append, log, record, recordRounds } from '../lib/figures.js';
import { type LoadFigures, load, roundRobin } from '../lib/load.js';
import { placeCluster, storeDatabase } from '../lib/postgres.js';
import { type Target, rssMiB, waitFor200 } from '../lib/processes.js';
import { bearer, readPath, writeRequest } from '../lib/requests.js';
import { startPostgresServer, startServer } from '../lib/servers.js';
import { type GeneratedStore, generateStore } from '../lib/store.js';

/**
 * tokenbell on PostgreSQL (default settings) as measured beside the file store: the headline with the database on both
 * cores, shared with the servers and the load generator as the issue's targets assume; and the same with the database
 * squeezed onto the servers' one core, where every query is also a switch between the two processes.
 */
export const postgresVariants = [
  { key: 'postgres', label: 'both cores', cores: 'all' },
  { key: 'postgres_one_core', label: "on the servers' core", cores: 'servers' },
] as const;
type Kind = 'file' | (typeof postgresVariants)[number]['key'];
const kinds: readonly Kind[] = ['file', ...postgresVariants.map((v) => v.key)];

export async function postgresBenchmark({ config, work }: Run, cluster: TestCluster): Promise<void> {
  log('copying a 1k-user store into PostgreSQL');
  const store = await generateStore(join(work, 'postgres.json'), { users: 1_000 });
  const targets = await startTargets(store, await storeDatabase(cluster, store.file));
  const next = Object.fromEntries(kinds.map((k) => [k, { token: roundRobin(store.accessTokens) }])) as Record<Kind, { token: () => string }>;
  const read = (k: Kind, connections: number, duration: number) =>
    load({ url: targets[k].url, connections, duration, requests: [{ method: 'GET', path: readPath, setupRequest: (req: object) => ({ ...req, headers: bearer(next[k].token()) }) }] });
  const write = (k: Kind, connections: number, duration: number) => load({ url: targets[k].url, connections, duration, requests: writeRequest(next[k].token) });
  const readConnections = [10, 50];
  const writeConnections = 50;
  for (const k of kinds) {
    await read(k, 10, config.warmupSeconds);
    await write(k, 10, config.warmupSeconds);
  }
  const runs = new Map<string, LoadFigures[]>();
  const ratios = new Map<string, number[]>();
  const measure = async (id: string, run: (k: Kind) => Promise<LoadFigures>) => {
    const figures = new Map<Kind, LoadFigures>();
    for (const k of kinds) figures.set(k, await placed(cluster, k, () => run(k)));
    for (const [k, f] of figures) append(runs, `postgres.${id}.${k}`, f);
    for (const v of postgresVariants) append(ratios, `ratio.${v.key}_vs_file.${id}`, figures.get(v.key)!.rps / figures.get('file')!.rps);
  };
  for (let round = 0; round < config.rounds; round++) {
    log(`PostgreSQL round ${round + 1}/${config.rounds}`);
    for (const c of readConnections) await measure(`read.c${c}`, (k) => read(k, c, config.seconds));
    await measure(`write.c${writeConnections}`, (k) => write(k, writeConnections, config.seconds));
  }
  recordRounds(runs, ratios);
  record('rss.postgres_server_mib', rssMiB(targets.postgres.pid));
  for (const target of Object.values(targets)) await target.stop();
}

/** The file server, then one PostgreSQL server per variant on the same database; records the PostgreSQL cold start. */
async function startTargets(store: GeneratedStore, databaseUrl: string): Promise<Record<Kind, Target>> {
  const file = await startServer('file server (beside PostgreSQL)', store.file);
  await waitFor200(file, readPath, bearer(store.accessTokens[0]!), 60_000);
  const targets = { file } as Record<Kind, Target>;
  // Spawned one after the other once the file server has started, so that each start-up runs alone on the servers' core.
  for (const variant of postgresVariants) {
    const target = await startPostgresServer(`PostgreSQL server (${variant.label})`, databaseUrl);
    const first = await waitFor200(target, readPath, bearer(store.accessTokens[0]!), 60_000);
    if (variant.key === 'postgres') record('postgres.spawn_to_first_200_ms', first - target.spawnedAt);
    targets[variant.key] = target;
  }
  return targets;
}

/** `run` on target `k`, with the cluster where that target's variant puts it (and back on both cores after). */
async function placed(cluster: TestCluster, k: Kind, run: () => Promise<LoadFigures>): Promise<LoadFigures> {
  const variant = postgresVariants.find((v) => v.key === k);
  if (variant?.cores !== 'servers') return run();
  placeCluster(cluster, 'servers');
  try {
    return await run();
  } finally {
    placeCluster(cluster, 'all');
  }
}
