// `npm run bench [-- --quick] [-- --json FILE] [-- --only read,sdk,write,token,postgres,testing]`: starts every target as a child process on 127.0.0.1, warms each
// up, measures in interleaved rounds (so drift from other work on the machine hits every target alike), and prints
// one table of medians plus ratios taken within this run. See bench/README.md for what each figure means.
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Bench } from 'tinybench';
import { createTokenbellClient } from '../packages/sdk/src/index.js';
import { type LoadFigures, Pool, load, median, roundRobin } from './lib/load.js';
import { type Target, freePort, pin, pinning, pinWithChildren, rssMiB, startTarget, stopAll, waitFor200, waitForListening } from './lib/processes.js';
import { type GeneratedStore, client, generateStore, password, project } from './lib/store.js';
import { copyStoreIntoDatabase } from './lib/postgres.js';
import { type TestCluster, createDatabase, startCluster } from '../test/support/postgres.js';
import { migrate } from '../packages/server/src/store/postgres/migrate.js';
import { administrator, writeContractSeed } from '../test/contract/seed.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const { values: flags } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, json: { type: 'string' }, only: { type: 'string' } },
  strict: true,
});
const quick = flags.quick!;
const sections = ['read', 'sdk', 'write', 'token', 'postgres', 'testing'] as const;
// `--only` runs some sections (to work on one figure); the table shows '-' for figures it did not measure.
const only = new Set(flags.only ? flags.only.split(',').map((s) => s.trim()) : sections);
for (const s of only) {
  if (!(sections as readonly string[]).includes(s)) {
    process.stderr.write(`bench: --only ${s}: unknown section; use some of ${sections.join(', ')}\n`);
    process.exit(2);
  }
}

const config = quick
  ? { rounds: 1, seconds: 1, warmupSeconds: 0.5, connections: [1, 10, 50], stores: [1_000], coldStarts: 1, memoryRequests: 2_000, memorySeconds: 4, sdkMs: 300, kitStarts: 3, kitResets: 40, kitResetSeconds: 3 }
  : { rounds: 3, seconds: 3, warmupSeconds: 1, connections: [1, 10, 50], stores: [1_000, 10_000, 100_000], coldStarts: 3, memoryRequests: 100_000, memorySeconds: 60, sdkMs: 1_500, kitStarts: 10, kitResets: 200, kitResetSeconds: 6 };
const tokenConnections = 10;
const tokenConnectionCounts = [10, 50];

/** Every figure, flat, as the JSON result file holds them: `section.case.metric` → number. */
const figures: Record<string, number> = {};
const notes: string[] = [];
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

const readPath = '/api/v3/notification_settings';
const writePath = `/api/v3/projects/${project.id}/notification_settings`;
// Level custom with events: the write path that does the most (level, twelve flags, the record's events).
const writeBody = JSON.stringify({ level: 'custom', new_note: true, new_issue: true, close_issue: false, new_merge_request: true, merge_merge_request: false });

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const pat = (token: string) => ({ 'private-token': token });

function serverCommand(port: number, dataFile: string): [string, string[]] {
  // Production flags: no --validate-responses, NODE_ENV=production (set in env below).
  return [process.execPath, [join(root, 'packages/server/dist/cli.js'), '--port', String(port), '--data', dataFile]];
}

async function startServer(name: string, dataFile: string, env: NodeJS.ProcessEnv = {}): Promise<Target> {
  const port = await freePort();
  const [command, args] = serverCommand(port, dataFile);
  return startTarget(name, command, args, port, { NODE_ENV: 'production', ...env });
}

async function storeStats(target: Target, file: string): Promise<{ acknowledged: number; fileWrites: number }> {
  await unlink(file).catch(() => undefined);
  target.child.kill('SIGUSR2');
  for (let i = 0; i < 500; i++) {
    try {
      return JSON.parse(await readFile(file, 'utf8')) as { acknowledged: number; fileWrites: number };
    } catch {
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  throw new Error(`${target.name} wrote no store stats to ${file} after SIGUSR2`);
}

function record(key: string, value: number): void {
  figures[key] = value;
}

/** Lowest and highest of a figure's rounds, beside its median (the table prints them as "median (min-max)"). */
const spreads: Record<string, [number, number]> = {};

function recordMedian(key: string, values: number[]): void {
  record(key, median(values));
  spreads[key] = [Math.min(...values), Math.max(...values)];
}

/** Adds `value` to the list of a figure's rounds in `map`. */
function append<T>(map: Map<string, T[]>, key: string, value: T): void {
  map.set(key, [...(map.get(key) ?? []), value]);
}

function summarise(prefix: string, runs: LoadFigures[]): void {
  recordMedian(`${prefix}.rps`, runs.map((r) => r.rps));
  record(`${prefix}.p50_ms`, median(runs.map((r) => r.p50)));
  record(`${prefix}.p99_ms`, median(runs.map((r) => r.p99)));
  const failed = runs.reduce((n, r) => n + r.failed, 0);
  record(`${prefix}.failed`, failed);
  if (failed > 0) {
    const statuses: Record<string, number> = {};
    for (const r of runs) for (const [code, n] of Object.entries(r.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
    notes.push(`${prefix}: ${failed} failed requests (statuses ${JSON.stringify(statuses)})`);
  }
}

function build(): void {
  log('building the server (npm run build -w @tokenbell/server)');
  const result = spawnSync('npm', ['run', 'build', '-w', '@tokenbell/server', '--silent'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (result.status !== 0) throw new Error(`the server build failed (exit ${result.status})`);
}

/**
 * Spawn to the first answered request, for `tokenbell --memory` on the contract suite's seed (what a test suite
 * starts) and on the 1k-user JSON file; split into spawn -> listening, the first request and the same one again.
 */
async function coldStart(work: string, store: GeneratedStore): Promise<Target> {
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
        const port = await freePort();
        const args = [join(root, 'packages/server/dist/cli.js'), '--memory', '--seed', seed, '--port', String(port)];
        target = startTarget('tokenbell --memory --seed', process.execPath, args, port, { NODE_ENV: 'production' });
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

async function readBenchmark(reference: Target, store: GeneratedStore): Promise<void> {
  const headers = bearer(store.accessTokens[0]!);
  const answer = await (await fetch(`${reference.url}${readPath}`, { headers })).text();
  const ceilingPort = await freePort();
  const ceiling = startTarget('bare Express', process.execPath, ['--import', 'tsx', join(root, 'bench/targets/ceiling.ts'), String(ceilingPort), answer], ceilingPort, {
    NODE_ENV: 'production',
  });
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
  for (let round = 0; round < config.rounds; round++) {
    for (const connections of config.connections) {
      const rps: Record<string, number> = {};
      for (const { key, target } of targets) {
        log(`read round ${round + 1}/${config.rounds}: ${key}, ${connections} connections`);
        const figures = await load({ url: `${target.url}${readPath}`, headers, connections, duration: config.seconds });
        const id = `read.${key}.c${connections}`;
        append(runs, id, figures);
        rps[key] = figures.rps;
      }
      // Ratios per round, then the median: both sides of each ratio ran back to back under the same load.
      append(ratios, `ratio.read_vs_ceiling.c${connections}`, rps.reference! / rps.ceiling!);
      append(ratios, `ratio.read_vs_prism.c${connections}`, rps.reference! / rps.prism!);
    }
  }
  await errorBenchmark(reference, store, runs, ratios);
  for (const [id, list] of runs) summarise(id, list);
  for (const [name, list] of ratios) recordMedian(name, list);
  record('rss.reference_after_read_mib', rssMiB(reference.pid));
  record('rss.prism_mib', rssMiB(prism.pid));
  await ceiling.stop();
  await prism.stop();
}

/**
 * Item 4 of issue 20: floods of unauthenticated GETs (401) and of malformed PUTs (a level outside the enum: 400 from
 * the validator) beside successful GETs, on the same server, at 50 connections, interleaved in every round.
 */
async function errorBenchmark(reference: Target, store: GeneratedStore, runs: Map<string, LoadFigures[]>, ratios: Map<string, number[]>): Promise<void> {
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

async function sdkBenchmark(reference: Target, store: GeneratedStore): Promise<void> {
  const token = store.accessTokens[0]!;
  const url = `${reference.url}${readPath}`;
  const headers = bearer(token);
  const sdk = createTokenbellClient({ baseUrl: reference.url, auth: { accessToken: token } });
  // Both go through the same global fetch (undici's keep-alive pool) to the same server, and both parse the JSON.
  const plain = async () => {
    const response = await fetch(url, { headers });
    if (response.status !== 200) throw new Error(`plain fetch answered ${response.status}`);
    await response.json();
  };
  const viaSdk = async () => {
    await sdk.notificationSettings.global.get();
  };
  const p50: Record<string, number[]> = { fetch: [], sdk: [] };
  const ratios: number[] = [];
  for (let round = 0; round < config.rounds; round++) {
    log(`sdk round ${round + 1}/${config.rounds}`);
    const bench = new Bench({ time: config.sdkMs, warmupTime: Math.min(500, config.sdkMs), throws: true });
    // Alternating order across rounds, so neither side always runs on the warmer process.
    if (round % 2 === 0) bench.add('fetch', plain).add('sdk', viaSdk);
    else bench.add('sdk', viaSdk).add('fetch', plain);
    await bench.run();
    const latency = (name: string) => {
      const result = bench.getTask(name)!.result;
      if (!('latency' in result)) throw new Error(`tinybench task ${name} has no latency (${result.state})`);
      return result.latency.p50;
    };
    p50.fetch!.push(latency('fetch'));
    p50.sdk!.push(latency('sdk'));
    ratios.push(latency('sdk') / latency('fetch') - 1);
  }
  record('sdk.fetch.p50_ms', median(p50.fetch!));
  record('sdk.client.p50_ms', median(p50.sdk!));
  record('ratio.sdk_overhead_pct', median(ratios) * 100);
}

async function writeBenchmark(work: string): Promise<void> {
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
  const request = (next: () => string) => [
    {
      method: 'PUT',
      path: writePath,
      headers: { 'content-type': 'application/json' },
      body: writeBody,
      setupRequest: (req: { headers?: Record<string, string> }) => ({ ...req, headers: { ...req.headers, ...bearer(next()) } }),
    },
  ];
  for (const s of servers) {
    log(`warming up the write server with ${s.users} users`);
    await load({ url: s.target.url, connections: 10, duration: config.warmupSeconds, requests: request(s.next) });
  }
  const runs = new Map<string, LoadFigures[]>();
  // Per store and connection count: acknowledged commits, file writes, 2xx answers, summed over the rounds.
  const counts = new Map<string, { acknowledged: number; fileWrites: number; ok: number }>();
  for (let round = 0; round < config.rounds; round++) {
    for (const connections of config.connections) {
      for (const s of servers) {
        log(`write round ${round + 1}/${config.rounds}: ${s.users} users, ${connections} connections`);
        const before = await storeStats(s.target, s.statsFile);
        const result = await load({ url: s.target.url, connections, duration: config.seconds, requests: request(s.next) });
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

/**
 * tokenbell on PostgreSQL (default settings) as measured beside the file store: the headline with the database on both
 * cores, shared with the servers and the load generator as the issue's targets assume; and the same with the database
 * squeezed onto the servers' one core, where every query is also a switch between the two processes.
 */
const postgresVariants = [
  { key: 'postgres', label: 'both cores', cores: 'all' },
  { key: 'postgres_one_core', label: "on the servers' core", cores: 'servers' },
] as const;
type PostgresVariant = (typeof postgresVariants)[number]['key'];

/** Moves the cluster (postmaster and backends) to the cores a variant asks for. */
const placeCluster = (cluster: TestCluster, cores: 'all' | 'servers') => pinning && pinWithChildren(pinning[cores], cluster.pid);

/**
 * The same 1k-user store on the JSON file and on PostgreSQL (a durable cluster: fsync on), measured in interleaved
 * rounds: authenticated reads and durable PUTs (the token endpoint on both stores is the token section's).
 */
async function postgresBenchmark(work: string, cluster: TestCluster): Promise<void> {
  log('copying a 1k-user store into PostgreSQL');
  {
    const store = await generateStore(join(work, 'postgres.json'), { users: 1_000 });
    const database = await createDatabase(cluster.url);
    await migrate(database.url);
    await copyStoreIntoDatabase(store.file, database.url);
    const file = await startServer('file server (beside PostgreSQL)', store.file);
    await waitFor200(file, readPath, bearer(store.accessTokens[0]!), 60_000);
    const targets: Record<'file' | PostgresVariant, Target> = { file } as Record<'file' | PostgresVariant, Target>;
    // Spawned one after the other once the file server has started, so that each start-up runs alone on the servers' core.
    for (const variant of postgresVariants) {
      const port = await freePort();
      const args = [join(root, 'packages/server/dist/cli.js'), '--port', String(port), '--database-url', database.url];
      const target = startTarget(`PostgreSQL server (${variant.label})`, process.execPath, args, port, { NODE_ENV: 'production' });
      const first = await waitFor200(target, readPath, bearer(store.accessTokens[0]!), 60_000);
      if (variant.key === 'postgres') record('postgres.spawn_to_first_200_ms', first - target.spawnedAt);
      targets[variant.key] = target;
    }
    const kinds = ['file', ...postgresVariants.map((v) => v.key)] as const;
    const next = Object.fromEntries(kinds.map((k) => [k, { token: roundRobin(store.accessTokens) }])) as Record<(typeof kinds)[number], { token: () => string }>;
    const read = (k: (typeof kinds)[number], connections: number, duration: number) =>
      load({ url: targets[k].url, connections, duration, requests: [{ method: 'GET', path: readPath, setupRequest: (req: object) => ({ ...req, headers: bearer(next[k].token()) }) }] });
    const write = (k: (typeof kinds)[number], connections: number, duration: number) =>
      load({ url: targets[k].url, connections, duration, requests: [{ method: 'PUT', path: writePath, headers: { 'content-type': 'application/json' }, body: writeBody, setupRequest: (req: { headers?: Record<string, string> }) => ({ ...req, headers: { ...req.headers, ...bearer(next[k].token()) } }) }] });
    /** `run` on target `k`, with the cluster where that target's variant puts it (and back on both cores after). */
    const placed = async (k: (typeof kinds)[number], run: () => Promise<LoadFigures>) => {
      const variant = postgresVariants.find((v) => v.key === k);
      if (variant?.cores !== 'servers') return run();
      placeCluster(cluster, 'servers');
      try {
        return await run();
      } finally {
        placeCluster(cluster, 'all');
      }
    };
    const readConnections = [10, 50];
    const writeConnections = 50;
    for (const k of kinds) {
      await read(k, 10, config.warmupSeconds);
      await write(k, 10, config.warmupSeconds);
    }
    const runs = new Map<string, LoadFigures[]>();
    const ratios = new Map<string, number[]>();
    const measure = async (id: string, run: (k: (typeof kinds)[number]) => Promise<LoadFigures>) => {
      const figures = new Map<(typeof kinds)[number], LoadFigures>();
      for (const k of kinds) figures.set(k, await placed(k, () => run(k)));
      for (const [k, f] of figures) append(runs, `postgres.${id}.${k}`, f);
      for (const v of postgresVariants) append(ratios, `ratio.${v.key}_vs_file.${id}`, figures.get(v.key)!.rps / figures.get('file')!.rps);
    };
    for (let round = 0; round < config.rounds; round++) {
      log(`PostgreSQL round ${round + 1}/${config.rounds}`);
      for (const c of readConnections) await measure(`read.c${c}`, (k) => read(k, c, config.seconds));
      await measure(`write.c${writeConnections}`, (k) => write(k, writeConnections, config.seconds));
    }
    for (const [id, list] of runs) summarise(id, list);
    for (const [id, list] of ratios) recordMedian(id, list);
    record('rss.postgres_server_mib', rssMiB(targets.postgres.pid));
    for (const target of Object.values(targets)) await target.stop();
  }
}

/** A form POST to `path`, its body built per request (so single-use values are each sent once). */
function formPost(path: string, body: () => Record<string, string>, headers: Record<string, string> = {}) {
  return [
    {
      method: 'POST',
      path,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      setupRequest: (req: object) => ({ ...req, body: new URLSearchParams(body()).toString() }),
    },
  ];
}

const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });

/** A server-side helper run on the servers' core: `node --import tsx bench/targets/NAME.ts ARGS`, its JSON line. */
function runOnServerCore<T>(name: string, args: string[]): T {
  const command = [process.execPath, '--import', 'tsx', join(root, `bench/targets/${name}.ts`), ...args];
  const [file, argv] = pinning ? ['taskset', ['-c', pinning.servers, ...command]] : [command[0]!, command.slice(1)];
  const result = spawnSync(file, argv, { cwd: root, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${name} failed (exit ${result.status}): ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

type TokenKey = 'file' | 'postgres' | 'peer' | 'ceiling';
const tokenTargets: Array<{ key: TokenKey; label: string }> = [
  { key: 'file', label: 'tokenbell, JSON file (durable)' },
  { key: 'postgres', label: 'tokenbell, PostgreSQL (durable)' },
  { key: 'peer', label: 'node-oidc-provider 8.8.1 (memory)' },
  { key: 'ceiling', label: 'bare Express 5 form POST (ceiling)' },
];

interface TokenTarget {
  key: TokenKey;
  target: Target;
  /** Single-use refresh tokens; `refill` tops the pool up to `n` before a run where the target can mint at run time. */
  refresh: Pool;
  refill?: (n: number) => Promise<void>;
  /** Access tokens to introspect (reused: introspection consumes nothing). */
  introspect: () => string;
  tokenPath: string;
  introspectPath: string;
}

/** Starts node-oidc-provider (bench/targets/peer-oidc-provider.ts) and returns it with its minting route. */
async function startPeer(): Promise<{ target: Target; mint: (refresh: number, access: number) => Promise<{ refreshTokens: string[]; accessTokens: string[] }> }> {
  const port = await freePort();
  const controlPort = await freePort();
  const target = startTarget('node-oidc-provider', process.execPath, ['--import', 'tsx', join(root, 'bench/targets/peer-oidc-provider.ts'), String(port), String(controlPort), client.id, client.secret], port, { NODE_ENV: 'production' });
  await waitFor200(target, '/.well-known/openid-configuration', {}, 60_000);
  const mint = async (refresh: number, access: number) => {
    const response = await fetch(`http://127.0.0.1:${controlPort}/mint?refresh=${refresh}&access=${access}`, { method: 'POST' });
    if (response.status !== 200) throw new Error(`the peer's mint answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as { refreshTokens: string[]; accessTokens: string[] };
  };
  return { target, mint };
}

/**
 * The token endpoint, time-bounded like every other row: tokenbell on its JSON file and on PostgreSQL (the same
 * generated store), node-oidc-provider (the peer) and a bare Express form POST answering the same JSON (the ceiling).
 * Refresh grant (rotation; durable on tokenbell) and introspection (RFC 7662, client_secret_basic) at 10 and 50
 * connections, each target in turn inside every round; the code grant at 10 on tokenbell's two stores.
 *
 * Every request takes a fresh code or refresh token (autocannon's setupRequest drawing from a Pool). How pools are
 * sized so a run never runs dry: tokenbell's are written into its store before it starts, so a first short run on a
 * throwaway server measures the fastest rate (code and refresh at 50 connections, after a warm-up), and each later
 * run gets three times that rate (at least 3,000/s) times its duration, plus 1,000; the peer's pool is refilled
 * before each of its runs to the same measure of the fastest rate it has shown so far (warm-ups included). A pool
 * that still runs dry stops the bench with an error rather than report refused reuse.
 */
async function tokenBenchmark(work: string, cluster: TestCluster): Promise<void> {
  const began = performance.now();
  const sizingPool = 20_000;
  log(`token: sizing the pools on a throwaway server (${sizingPool} codes, ${sizingPool} refresh tokens)`);
  const sizing = await generateStore(join(work, 'token-sizing.json'), { users: 1_000, codes: sizingPool, refreshTokens: sizingPool });
  const sizer = await startServer('token server (sizing)', sizing.file);
  await waitFor200(sizer, readPath, bearer(sizing.accessTokens[0]!), 60_000);
  const auth = basic(client.id, client.secret);
  const codeBody = (pool: Pool) => () => ({ grant_type: 'authorization_code', code: pool.take(), redirect_uri: client.redirectUri });
  const refreshBody = (pool: Pool) => () => ({ grant_type: 'refresh_token', refresh_token: pool.take() });
  const sizingCodes = new Pool(sizing.codes, 'sizing code');
  const sizingRefresh = new Pool(sizing.refreshTokens, 'sizing refresh token');
  let fastest = 0;
  for (const [body, pool] of [[codeBody(sizingCodes), sizingCodes], [refreshBody(sizingRefresh), sizingRefresh]] as const) {
    await load({ url: sizer.url, connections: 50, duration: config.warmupSeconds, requests: formPost('/oauth/token', body, auth) });
    const result = await load({ url: sizer.url, connections: 50, duration: config.warmupSeconds, requests: formPost('/oauth/token', body, auth) });
    pool.check();
    fastest = Math.max(fastest, result.rps);
  }
  await sizer.stop();
  // Three times the first run's rate (later runs are warmer, and a busy machine may quieten), and never under
  // 3,000 a second.
  const size = (rate: number) => Math.ceil(Math.max(rate * 3, 3_000) * config.seconds) + 1_000;
  const perRun = size(fastest);
  // Runs that use tokenbell's pools: a warm-up and one per round for codes (10 connections); a warm-up and two per
  // round for refresh tokens (10 and 50).
  const codes = perRun * (config.rounds + 1);
  const refreshTokens = perRun * (2 * config.rounds + 1);
  record('token.pool.sizing_rps', fastest);
  record('token.pool.per_run', perRun);
  log(`token: generating the store (${codes} codes, ${refreshTokens} refresh tokens) and copying it into PostgreSQL`);
  const store = await generateStore(join(work, 'token.json'), { users: 1_000, codes, refreshTokens });
  const database = await createDatabase(cluster.url);
  await migrate(database.url);
  await copyStoreIntoDatabase(store.file, database.url);
  const pgPort = await freePort();
  const file = await startServer('token server (file)', store.file);
  const postgres = startTarget('token server (PostgreSQL)', process.execPath, [join(root, 'packages/server/dist/cli.js'), '--port', String(pgPort), '--database-url', database.url], pgPort, { NODE_ENV: 'production' });
  for (const t of [file, postgres]) await waitFor200(t, readPath, bearer(store.accessTokens[0]!), 60_000);
  record('rss.token_file_after_start_mib', rssMiB(file.pid));
  record('rss.token_postgres_after_start_mib', rssMiB(postgres.pid));

  // Each store has its own copy of the codes and refresh tokens, so each uses every one once.
  const pools = {
    file: { codes: new Pool([...store.codes], 'file code'), refresh: new Pool([...store.refreshTokens], 'file refresh token') },
    postgres: { codes: new Pool([...store.codes], 'PostgreSQL code'), refresh: new Pool([...store.refreshTokens], 'PostgreSQL refresh token') },
  };
  // The ceiling answers what tokenbell answers (one refresh and one introspection of the file server's, shape only).
  const answer = async (path: string, body: Record<string, string>) => {
    const response = await fetch(`${file.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...auth }, body: new URLSearchParams(body).toString() });
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
    return response.json() as Promise<unknown>;
  };
  const forms = {
    '/oauth/token': await answer('/oauth/token', refreshBody(pools.file.refresh)()),
    '/oauth/introspect': await answer('/oauth/introspect', { token: store.accessTokens[0]! }),
  };
  const ceilingPort = await freePort();
  const ceiling = startTarget('bare Express (form POST)', process.execPath, ['--import', 'tsx', join(root, 'bench/targets/ceiling.ts'), String(ceilingPort), '{}', JSON.stringify(forms)], ceilingPort, { NODE_ENV: 'production' });
  await waitFor200(ceiling, readPath, {}, 60_000);
  const peer = await startPeer();
  const peerAccess = (await peer.mint(0, 1_000)).accessTokens;
  const peerRefresh = new Pool([], 'node-oidc-provider refresh token');
  const ceilingRefresh = store.refreshTokens[0]!;
  const targets: Record<TokenKey, TokenTarget> = {
    file: { key: 'file', target: file, refresh: pools.file.refresh, introspect: roundRobin(store.accessTokens), tokenPath: '/oauth/token', introspectPath: '/oauth/introspect' },
    postgres: { key: 'postgres', target: postgres, refresh: pools.postgres.refresh, introspect: roundRobin(store.accessTokens), tokenPath: '/oauth/token', introspectPath: '/oauth/introspect' },
    peer: {
      key: 'peer',
      target: peer.target,
      refresh: peerRefresh,
      refill: async (n) => {
        if (peerRefresh.left < n) peerRefresh.add((await peer.mint(n - peerRefresh.left, 0)).refreshTokens);
      },
      introspect: roundRobin(peerAccess),
      tokenPath: '/token',
      introspectPath: '/token/introspection',
    },
    // The ceiling parses the same-shaped form and answers the same JSON; its "refresh token" is never checked.
    ceiling: { key: 'ceiling', target: ceiling, refresh: new Pool([], 'ceiling'), introspect: () => store.accessTokens[0]!, tokenPath: '/oauth/token', introspectPath: '/oauth/introspect' },
  };
  let peerPerRun = perRun;
  const refresh = async (t: TokenTarget, connections: number, duration: number) => {
    await t.refill?.(peerPerRun);
    const body = t.key === 'ceiling' ? () => ({ grant_type: 'refresh_token', refresh_token: ceilingRefresh }) : refreshBody(t.refresh);
    const result = await load({ url: t.target.url, connections, duration, requests: formPost(t.tokenPath, body, auth) });
    t.refresh.check();
    if (t.key === 'peer') peerPerRun = Math.max(peerPerRun, size(result.rps));
    return result;
  };
  const introspect = (t: TokenTarget, connections: number, duration: number) =>
    load({ url: t.target.url, connections, duration, requests: formPost(t.introspectPath, () => ({ token: t.introspect() }), auth) });
  const code = async (k: 'file' | 'postgres', connections: number, duration: number) => {
    const result = await load({ url: targets[k].target.url, connections, duration, requests: formPost('/oauth/token', codeBody(pools[k].codes), auth) });
    pools[k].codes.check();
    return result;
  };
  log('token: warming up every target');
  for (const t of Object.values(targets)) {
    await introspect(t, 10, config.warmupSeconds);
    await refresh(t, 10, config.warmupSeconds);
  }
  for (const k of ['file', 'postgres'] as const) await code(k, 10, config.warmupSeconds);
  // The peer's warm-up ran at 10 connections: one short run at 50 sizes its refills for the faster case too.
  await refresh(targets.peer, 50, config.warmupSeconds);

  const runs = new Map<string, LoadFigures[]>();
  const ratios = new Map<string, number[]>();
  const add = (name: string, value: number) => append(ratios, name, value);
  const keep = (id: string, result: LoadFigures) => append(runs, id, result);
  for (let round = 0; round < config.rounds; round++) {
    for (const c of tokenConnectionCounts) {
      for (const [grant, run] of [['refresh_token', refresh], ['introspection', introspect]] as const) {
        log(`token round ${round + 1}/${config.rounds}: ${grant}, ${c} connections`);
        const rps = {} as Record<TokenKey, number>;
        for (const { key } of tokenTargets) {
          const result = await run(targets[key], c, config.seconds);
          keep(`token.${grant}.c${c}.${key}`, result);
          rps[key] = result.rps;
        }
        for (const k of ['file', 'postgres'] as const) {
          add(`ratio.token.${grant}.c${c}.${k}_vs_peer`, rps[k] / rps.peer);
          add(`ratio.token.${grant}.c${c}.${k}_vs_ceiling`, rps[k] / rps.ceiling);
        }
        add(`ratio.postgres_vs_file.token.${grant}.c${c}`, rps.postgres / rps.file);
      }
    }
    log(`token round ${round + 1}/${config.rounds}: authorization_code, ${tokenConnections} connections`);
    const pair = { file: await code('file', tokenConnections, config.seconds), postgres: await code('postgres', tokenConnections, config.seconds) };
    for (const k of ['file', 'postgres'] as const) keep(`token.authorization_code.c${tokenConnections}.${k}`, pair[k]);
    add(`ratio.postgres_vs_file.token.authorization_code.c${tokenConnections}`, pair.postgres.rps / pair.file.rps);
  }
  for (const [id, list] of runs) summarise(id, list);
  for (const [name, list] of ratios) recordMedian(name, list);
  record('rss.token_file_after_runs_mib', rssMiB(file.pid));
  record('rss.token_postgres_after_runs_mib', rssMiB(postgres.pid));
  await Promise.all([file, postgres, peer.target, ceiling].map((t) => t.stop()));
  notes.push(
    `token: pools sized from a first short run (${fmt(fastest)} grants/s at 50 connections): ${fmt(perRun)} codes or refresh tokens per run on tokenbell (${fmt(codes)} codes, ${fmt(refreshTokens)} refresh tokens in its store), the peer refilled to ${fmt(peerPerRun)} before each run; the section took ${fmt((performance.now() - began) / 1000, 1)} s`,
  );
  await passwordBenchmark(work);
  await memoryBenchmark(work, cluster);
}

/**
 * Item 6 of issue 20: the password grant (right passwords, every request from 127.0.0.1) at 10 and 50 connections
 * against the KDF's own rate on the same core, with the 429s it answered; then the p99 of authenticated GETs alone
 * and while a 50-connection password-grant storm runs. Every password run has a freshly started server, so a
 * lockout one run provokes never carries into the next.
 */
async function passwordBenchmark(work: string): Promise<void> {
  // scrypt allows tens of checks per second on one core: a 1-second run at 50 connections would end before its first
  // answers, so the quick bench runs these for 3 seconds too.
  const seconds = Math.max(config.seconds, 3);
  const store = await generateStore(join(work, 'password.json'), { users: 1_000 });
  const nextUser = roundRobin(store.usernames);
  const body = () => ({ grant_type: 'password', username: nextUser(), password });
  let copies = 0;
  const fresh = async () => {
    // Its own copy of the store: the server that took 10 connections is still running during the 50-connection run.
    const file = join(work, `password-${copies++}.json`);
    await copyFile(store.file, file);
    const target = await startServer('password server', file);
    await waitFor200(target, readPath, bearer(store.accessTokens[0]!), 60_000);
    // One request compiles the validator's checks for the token endpoint before the clock starts.
    await fetch(`${target.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body()).toString() }).then((r) => r.text());
    return target;
  };
  const runs = new Map<string, LoadFigures[]>();
  const ratios = new Map<string, number[]>();
  const add = (name: string, value: number) => append(ratios, name, value);
  const keep = (id: string, result: LoadFigures) => append(runs, id, result);
  const refusals = new Map<string, number>();
  const kdf = new Map<string, number[]>();
  let quietServer: Target | undefined;
  let stormSeconds = seconds;
  for (let round = 0; round < config.rounds; round++) {
    for (const c of tokenConnectionCounts) {
      log(`password round ${round + 1}/${config.rounds}: KDF alone and password grant, ${c} connections`);
      const { rate } = runOnServerCore<{ rate: number }>('kdf', [String(c), String(seconds)]);
      kdf.set(`token.kdf.c${c}`, [...(kdf.get(`token.kdf.c${c}`) ?? []), rate]);
      const target = await fresh();
      // Long enough for every connection to see several answers: at 50 connections and 17 checks a second, a
      // 3-second run ended before most of the first answers came back, and reported none.
      // (The quick bench only needs some answers; the full one takes at most 30 s per run.)
      const duration = Math.max(seconds, Math.min(30, Math.ceil(((quick ? 2 : 8) * c) / Math.max(rate, 1))));
      if (c === 50) stormSeconds = duration;
      const result = await load({ url: target.url, connections: c, duration, requests: formPost('/oauth/token', body) });
      // The server that took 10 connections goes on to the storm (its 429s above say whether it locked the address
      // out); the one that took 50 is not reused.
      if (c === 10) quietServer = target;
      else await target.stop();
      keep(`token.password.c${c}`, result);
      refusals.set(`token.password.c${c}.status_429`, (refusals.get(`token.password.c${c}.status_429`) ?? 0) + (result.statuses['429'] ?? 0));
      add(`ratio.password_vs_kdf.c${c}`, result.rps / rate);
    }
    log(`password round ${round + 1}/${config.rounds}: GETs alone, then during a password-grant storm`);
    const target = quietServer!;
    await load({ url: `${target.url}${readPath}`, connections: 10, duration: config.warmupSeconds, headers: bearer(store.accessTokens[0]!) });
    const quiet = await load({ url: `${target.url}${readPath}`, connections: 10, duration: seconds, headers: bearer(store.accessTokens[0]!) });
    const [busy, storm] = await Promise.all([
      load({ url: `${target.url}${readPath}`, connections: 10, duration: stormSeconds, headers: bearer(store.accessTokens[0]!) }),
      load({ url: target.url, connections: 50, duration: stormSeconds, requests: formPost('/oauth/token', body) }),
    ]);
    await target.stop();
    keep('token.get_quiet.c10', quiet);
    keep('token.get_during_password_storm.c10', busy);
    keep('token.password_storm.c50', storm);
    refusals.set('token.password_storm.c50.status_429', (refusals.get('token.password_storm.c50.status_429') ?? 0) + (storm.statuses['429'] ?? 0));
    add('ratio.get_p99_storm_vs_quiet', busy.p99 / Math.max(quiet.p99, 1));
  }
  for (const [id, list] of runs) summarise(id, list);
  for (const [id, list] of kdf) record(`${id}.rps`, median(list));
  for (const [id, n] of refusals) record(id, n);
  for (const [name, list] of ratios) recordMedian(name, list);
}

/**
 * Item 7 of issue 20: resident memory of each server after start and after up to `memoryRequests` mixed requests
 * (half refresh grants, half introspections, at 50 connections; a slow server stops at `memorySeconds` and the count
 * says how many it served), each on a fresh process: tokenbell on its file and on
 * PostgreSQL, node-oidc-provider, bare Express. Every server holds the same pool of refresh tokens before the
 * "after start" reading (written into tokenbell's store, minted into the peer's memory).
 */
async function memoryBenchmark(work: string, cluster: TestCluster): Promise<void> {
  const half = config.memoryRequests / 2;
  log(`memory: up to ${config.memoryRequests} mixed requests per server, at most ${config.memorySeconds} s each`);
  const store = await generateStore(join(work, 'memory.json'), { users: 1_000, refreshTokens: half + 1_000 });
  const database = await createDatabase(cluster.url);
  await migrate(database.url);
  await copyStoreIntoDatabase(store.file, database.url);
  const auth = basic(client.id, client.secret);
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
  const pgPort = await freePort();
  const postgres = startTarget('memory server (PostgreSQL)', process.execPath, [join(root, 'packages/server/dist/cli.js'), '--port', String(pgPort), '--database-url', database.url], pgPort, { NODE_ENV: 'production' });
  await waitFor200(postgres, readPath, bearer(store.accessTokens[0]!), 60_000);
  await measure('postgres', postgres, new Pool([...store.refreshTokens], 'memory PostgreSQL').take, roundRobin(store.accessTokens), { token: '/oauth/token', introspect: '/oauth/introspect' });
  const peer = await startPeer();
  const minted = await peer.mint(half + 1_000, 1_000);
  await measure('peer', peer.target, new Pool(minted.refreshTokens, 'memory peer').take, roundRobin(minted.accessTokens), { token: '/token', introspect: '/token/introspection' });
  const ceilingPort = await freePort();
  const forms = { '/oauth/token': { access_token: 'x', token_type: 'Bearer', expires_in: 7200, refresh_token: 'y', scope: 'api', created_at: 0 }, '/oauth/introspect': { active: true } };
  const ceiling = startTarget('bare Express (memory)', process.execPath, ['--import', 'tsx', join(root, 'bench/targets/ceiling.ts'), String(ceilingPort), '{}', JSON.stringify(forms)], ceilingPort, { NODE_ENV: 'production' });
  await waitFor200(ceiling, readPath, {}, 60_000);
  await measure('ceiling', ceiling, () => store.refreshTokens[0]!, () => store.accessTokens[0]!, { token: '/oauth/token', introspect: '/oauth/introspect' });
}

/** The `q`-quantile by nearest rank. */
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

function recordSpread(prefix: string, values: number[]): void {
  record(`${prefix}.median_ms`, median(values));
  record(`${prefix}.min_ms`, Math.min(...values));
  record(`${prefix}.max_ms`, Math.max(...values));
}

async function expect200(response: Response, what: string): Promise<void> {
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${what} answered ${response.status}: ${text}`);
}

/**
 * The test kit (`@tokenbell/server/testing`, issue 19) as a suite uses it, from the build: startTokenbell() on the
 * contract suite's seed (the example fixture plus an administrator and a public application, the larger of the
 * realistic seeds) to a first authenticated answer, against a bare http.createServer and a spawned CLI on the same
 * seed; then helpers.reset() after a few writes, which is what a suite pays before every test, against one PUT.
 */
async function testingBenchmark(work: string): Promise<void> {
  const began = performance.now();
  // The built module, as an installed package is imported: the bench measures dist, never the sources through tsx.
  const { startTokenbell } = (await import(pathToFileURL(join(root, 'packages/server/dist/testing.js')).href)) as typeof import('../packages/server/src/testing.js');
  const seed = await writeContractSeed(work);
  const fixture = JSON.parse(await readFile(seed, 'utf8')) as Record<'users' | 'groups' | 'projects' | 'applications', unknown[]>;
  // Personal access tokens go in PRIVATE-TOKEN; Bearer is for OAuth tokens.
  const me = (url: string, token: string) => fetch(`${url}/api/v4/user`, { headers: pat(token) });

  log(`test kit: ${config.kitStarts} sequential startTokenbell() -> first answer -> close()`);
  const starts = { total: [] as number[], resolved: [] as number[], first: [] as number[], second: [] as number[], close: [] as number[] };
  for (let i = 0; i < config.kitStarts; i++) {
    const starting = performance.now();
    const kit = await startTokenbell({ seed });
    const resolved = performance.now();
    try {
      const { token } = await kit.helpers.mintPersonalAccessToken({ username: 'jsmith', name: 'bench', scopes: ['read_user'] });
      const minted = performance.now();
      await expect200(await me(kit.url, token), 'the test kit');
      const answered = performance.now();
      await expect200(await me(kit.url, token), 'the test kit');
      starts.second.push(performance.now() - answered);
      starts.first.push(answered - minted);
      starts.resolved.push(resolved - starting);
      starts.total.push(answered - starting);
    } finally {
      const closing = performance.now();
      await kit.close();
      starts.close.push(performance.now() - closing);
    }
  }
  recordSpread('testing.start.to_first_answer', starts.total);
  // The first start in a process also pays for loading and compiling the server's code.
  record('testing.start.first_in_process_ms', starts.total[0]!);
  record('testing.start.resolved_ms', median(starts.resolved));
  record('testing.start.first_request_ms', median(starts.first));
  record('testing.start.second_request_ms', median(starts.second));
  record('testing.start.close_ms', median(starts.close));

  const bare: number[] = [];
  for (let i = 0; i < config.kitStarts; i++) {
    const starting = performance.now();
    const server = createServer((_req, res) => res.end('{}'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await (await fetch(`http://127.0.0.1:${port}/`)).text();
    bare.push(performance.now() - starting);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  recordSpread('testing.baseline.bare_http', bare);

  // The CLI on the same seed, in memory: what a suite that spawns the server instead waits for.
  const spawned: number[] = [];
  for (let i = 0; i < config.coldStarts; i++) {
    const port = await freePort();
    const target = startTarget('tokenbell --memory --seed', process.execPath, [join(root, 'packages/server/dist/cli.js'), '--memory', '--seed', seed, '--port', String(port), '--log-level', 'silent'], port, { NODE_ENV: 'production' });
    try {
      spawned.push((await waitFor200(target, '/api/v4/user', pat(administrator.pat))) - target.spawnedAt);
    } finally {
      await target.stop();
    }
  }
  recordSpread('testing.baseline.spawned_cli', spawned);
  record('ratio.testing_start_vs_spawned_cli', median(starts.total) / median(spawned));
  record('ratio.testing_start_vs_bare_http', median(starts.total) / median(bare));

  for (const store of ['memory', 'file'] as const) {
    const dataFile = join(work, 'testing-kit.json');
    await rm(dataFile, { force: true });
    const kit = await startTokenbell({ seed, ...(store === 'file' ? { dataFile } : {}) });
    try {
      // One user, a token of theirs and a setting changed through the API, then back to the seed; the same username
      // every round, so a reset that left the user behind would fail the next round's create.
      const round = async () => {
        await kit.helpers.createUser({ username: 'bench-user', email: 'bench-user@example.com', name: 'Bench User', password: 'bench-user-password' });
        const { token } = await kit.helpers.mintPersonalAccessToken({ username: 'bench-user', name: 'bench', scopes: ['api'] });
        const putting = performance.now();
        await expect200(await fetch(`${kit.url}${readPath}`, { method: 'PUT', headers: { ...pat(token), 'content-type': 'application/json' }, body: writeBody }), 'PUT notification settings');
        const put = performance.now() - putting;
        const resetting = performance.now();
        await kit.helpers.reset();
        return { put, reset: performance.now() - resetting };
      };
      // The first round compiles the validator's checks for these operations.
      await round();
      // A reset writes the whole seeded state into the data file (the journal holds only what came after it).
      if (store === 'file') record('testing.reset.store_kib', (await stat(dataFile)).size / 1024);
      log(`test kit: up to ${config.kitResets} rounds of writes and reset on the ${store} store`);
      const puts: number[] = [];
      const resets: number[] = [];
      // Each round hashes the new user's password (scrypt, tens of milliseconds), so a slow machine gets fewer rounds
      // rather than a longer run.
      const until = performance.now() + config.kitResetSeconds * 1000;
      for (let i = 0; i < config.kitResets && performance.now() < until; i++) {
        const { put, reset } = await round();
        puts.push(put);
        resets.push(reset);
      }
      record(`testing.reset.${store}.rounds`, resets.length);
      record(`testing.reset.${store}.median_ms`, median(resets));
      record(`testing.reset.${store}.p95_ms`, quantile(resets, 0.95));
      record(`testing.reset.${store}.put_median_ms`, median(puts));
      record(`ratio.testing_reset_vs_put.${store}`, median(resets) / median(puts));
    } finally {
      await kit.close();
    }
  }
  record('testing.section_seconds', (performance.now() - began) / 1000);
  notes.push(
    `testing: seed = the contract suite's (test/contract/seed.ts): ${fixture.users.length} users, ${fixture.groups.length} groups, ${fixture.projects.length} projects, ${fixture.applications.length} applications; each reset undoes 1 user, 1 personal access token and 1 notification setting; the section took ${fmt(figures['testing.section_seconds'], 1)} s`,
  );
}

function fmt(value: number | undefined, digits = 0): string {
  if (value === undefined || !Number.isFinite(value)) return '-';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A figure as `format` gives it, with the lowest and highest round when they differ from it. */
function withSpread(key: string, format: (value: number | undefined) => string): string {
  const spread = spreads[key];
  const text = format(figures[key]);
  if (!spread || spread[0] === spread[1]) return text;
  return `${text} (${format(spread[0])}-${format(spread[1])})`;
}
const pct = (key: string) => `${withSpread(key, (v) => fmt(v === undefined ? v : v * 100))} %`;
const times = (key: string, digits = 2) => `${withSpread(key, (v) => fmt(v, digits))}x`;

function table(): string {
  const rows: string[][] = [['benchmark', 'target / case', 'conns', 'store', 'req/s (min-max)', 'p50 ms', 'p99 ms', 'failed', 'acks/file write']];
  // autocannon records whole milliseconds, so a p50 of 0 means under a millisecond.
  const line = (section: string, label: string, conns: string, store: string, prefix: string) =>
    rows.push([
      section,
      label,
      conns,
      store,
      withSpread(`${prefix}.rps`, (v) => fmt(v)),
      fmt(figures[`${prefix}.p50_ms`]),
      fmt(figures[`${prefix}.p99_ms`]),
      fmt(figures[`${prefix}.failed`]),
      prefix.startsWith('write.') ? fmt(figures[`${prefix}.commits_per_file_write`], 1) : '',
    ]);
  for (const c of config.connections) {
    line('API read', 'reference server (auth + validation)', String(c), '1k', `read.reference.c${c}`);
    line('API read', 'bare Express 5 (ceiling)', String(c), '-', `read.ceiling.c${c}`);
    line('API read', 'Prism mock --dynamic=false', String(c), '-', `read.prism.c${c}`);
  }
  for (const u of config.stores) {
    for (const c of config.connections) line('API write', 'PUT project settings (durable)', String(c), `${u / 1000}k`, `write.u${u}.c${c}`);
  }
  for (const key of ['success', 'unauthenticated_401', 'malformed_400']) {
    const label = { success: 'GET answered 200', unauthenticated_401: 'GET without a token (401)', malformed_400: 'PUT with an invalid level (400)' }[key];
    line('API errors', `reference server: ${label}`, '50', '1k', `errors.${key}.c50`);
  }
  for (const c of tokenConnectionCounts) {
    for (const [grant, label] of [['refresh_token', 'refresh grant'], ['introspection', 'introspection']] as const) {
      for (const t of tokenTargets) line(`Token: ${label}`, t.label, String(c), t.key === 'file' || t.key === 'postgres' ? '1k' : '-', `token.${grant}.c${c}.${t.key}`);
    }
  }
  for (const k of ['file', 'postgres'] as const) line('Token: code grant', tokenTargets.find((t) => t.key === k)!.label, String(tokenConnections), '1k', `token.authorization_code.c${tokenConnections}.${k}`);
  for (const c of tokenConnectionCounts) line('Token: password grant', `right passwords, one address (429s: ${fmt(figures[`token.password.c${c}.status_429`])})`, String(c), '1k', `token.password.c${c}`);
  line('Password storm', 'GET alone', '10', '1k', 'token.get_quiet.c10');
  line('Password storm', 'GET during a password-grant storm', '10', '1k', 'token.get_during_password_storm.c10');
  line('Password storm', `the storm (429s: ${fmt(figures['token.password_storm.c50.status_429'])})`, '50', '1k', 'token.password_storm.c50');
  for (const [label, id, conns] of [
    ['authenticated GET', 'read.c10', '10'],
    ['authenticated GET', 'read.c50', '50'],
    ['PUT project settings (durable)', 'write.c50', '50'],
  ] as const) {
    line('Store: JSON file', label, conns, '1k', `postgres.${id}.file`);
    for (const v of postgresVariants) line('Store: PostgreSQL', `${label}, ${v.label}`, conns, '1k', `postgres.${id}.${v.key}`);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const render = (r: string[]) => r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ');
  const out = [render(rows[0]!), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.slice(1).map(render)];

  const extra: Array<[string, string]> = [
    ['SDK: plain fetch, p50 per call', `${fmt(figures['sdk.fetch.p50_ms'], 3)} ms`],
    ['SDK: client.notificationSettings.global.get(), p50 per call', `${fmt(figures['sdk.client.p50_ms'], 3)} ms`],
    ...(['memory', 'file'] as const).flatMap((kind): Array<[string, string]> => [
      [`Cold start, ${kind === 'memory' ? 'tokenbell --memory (contract seed)' : 'JSON file (1k users)'}: spawn -> first 200, median (min-max) of ${config.coldStarts}`, `${withSpread(`cold.${kind}.spawn_to_first_200_ms`, (v) => fmt(v))} ms`],
      ['  of which spawn -> listening', `${withSpread(`cold.${kind}.spawn_to_listening_ms`, (v) => fmt(v))} ms`],
      ['  of which first request', `${withSpread(`cold.${kind}.first_request_ms`, (v) => fmt(v, 1))} ms`],
      ['  the same request again', `${withSpread(`cold.${kind}.second_request_ms`, (v) => fmt(v, 1))} ms`],
    ]),
    ['Cold start, PostgreSQL (1k users): spawn -> first 200', `${fmt(figures['postgres.spawn_to_first_200_ms'])} ms`],
    ['RSS: reference server after the read benchmark (1k store)', `${fmt(figures['rss.reference_after_read_mib'])} MiB`],
    ['RSS: Prism mock', `${fmt(figures['rss.prism_mib'])} MiB`],
  ];
  for (const u of config.stores) {
    extra.push([`Write server ${u / 1000}k: spawn -> first 200`, `${fmt(figures[`write.u${u}.spawn_to_first_200_ms`])} ms`]);
    extra.push([`Write server ${u / 1000}k: RSS after the write benchmark`, `${fmt(figures[`rss.write_u${u}_mib`])} MiB`]);
    extra.push([`Write server ${u / 1000}k: data file before / after`, `${fmt(figures[`write.u${u}.store_mib`], 1)} / ${fmt(figures[`write.u${u}.store_after_mib`], 1)} MiB`]);
    extra.push([
      `Write server ${u / 1000}k: acknowledged writes / file writes, all rounds`,
      `${fmt(figures[`write.u${u}.acknowledged`])} / ${fmt(figures[`write.u${u}.file_writes`])} = ${fmt(figures[`write.u${u}.commits_per_file_write`], 1)} per file write (2xx answered: ${fmt(figures[`write.u${u}.answered_2xx`])})`,
    ]);
  }
  const ratioRows: Array<[string, string]> = [];
  for (const c of config.connections) {
    ratioRows.push([`read: reference / ceiling, ${c} conns (target >= 80%)`, `${pct(`ratio.read_vs_ceiling.c${c}`)}`]);
  }
  for (const c of config.connections) {
    ratioRows.push([`read: reference / Prism, ${c} conns (target >= 2.5x)`, `${times(`ratio.read_vs_prism.c${c}`)}`]);
  }
  const top = Math.max(...config.connections);
  if (config.stores.includes(10_000)) ratioRows.push([`write: 10k store, ${top} conns (target >= 2,000/s)`, `${fmt(figures[`write.u10000.c${top}.rps`])} writes/s`]);
  const smallest = config.stores[0]!;
  const largest = config.stores[config.stores.length - 1]!;
  if (largest > smallest) {
    ratioRows.push([
      `write: cost per write ${largest / 1000}k vs ${smallest / 1000}k store, ${top} conns (store ${largest / smallest}x)`,
      `${times(`ratio.write_cost_${largest}_vs_${smallest}.c${top}`)}, exponent ${fmt(figures[`ratio.write_cost_growth_exponent.c${top}`], 2)} (target < 1)`,
    ]);
  }
  ratioRows.push(['SDK overhead over plain fetch (target <= 10%)', `${fmt(figures['ratio.sdk_overhead_pct'], 1)} %`]);
  for (const [id, label, target] of [
    ['read.c10', 'read, 10 conns', 60],
    ['read.c50', 'read, 50 conns', 60],
    ['write.c50', 'durable write, 50 conns', 50],
  ] as const) {
    for (const v of postgresVariants) {
      const headline = v.key === 'postgres';
      ratioRows.push([`PostgreSQL (${v.label}) / JSON file, ${label}${headline ? ` (target >= ${target}%)` : ''}`, `${pct(`ratio.${v.key}_vs_file.${id}`)}`]);
    }
  }
  for (const [id, label] of [
    [`token.authorization_code.c${tokenConnections}`, 'code grant'],
    ...tokenConnectionCounts.flatMap((c) => [[`token.refresh_token.c${c}`, `refresh grant, ${c} conns`], [`token.introspection.c${c}`, `introspection, ${c} conns`]] as const),
  ] as const) {
    ratioRows.push([`PostgreSQL / JSON file, ${label}`, `${pct(`ratio.postgres_vs_file.${id}`)}`]);
  }
  extra.push(['RSS: PostgreSQL server after its benchmark', `${fmt(figures['rss.postgres_server_mib'])} MiB`]);
  for (const c of tokenConnectionCounts) extra.push([`KDF alone (scrypt N=2^14, r=8, p=1, the server's verifyPassword), ${c} in flight`, `${fmt(figures[`token.kdf.c${c}.rps`])} checks/s`]);
  extra.push([
    'RSS: token servers after start / after their runs (file, PostgreSQL; pools loaded)',
    `${fmt(figures['rss.token_file_after_start_mib'])} / ${fmt(figures['rss.token_file_after_runs_mib'])} MiB, ${fmt(figures['rss.token_postgres_after_start_mib'])} / ${fmt(figures['rss.token_postgres_after_runs_mib'])} MiB`,
  ]);
  for (const t of tokenTargets) {
    extra.push([`RSS: ${t.label}, after start / after ${fmt(figures[`rss.${t.key}.requests`])} mixed requests`, `${fmt(figures[`rss.${t.key}.after_start_mib`])} / ${fmt(figures[`rss.${t.key}.after_mixed_mib`])} MiB`]);
  }
  const spread = (prefix: string) => `${fmt(figures[`${prefix}.median_ms`], 1)} ms (${fmt(figures[`${prefix}.min_ms`], 1)}-${fmt(figures[`${prefix}.max_ms`], 1)})`;
  extra.push(
    [`Test kit: startTokenbell() -> first authenticated answer, median (min-max) of ${config.kitStarts}`, spread('testing.start.to_first_answer')],
    ['  the first start in the process', `${fmt(figures['testing.start.first_in_process_ms'], 1)} ms`],
    ['  of which startTokenbell() resolves (seeding, listening)', `${fmt(figures['testing.start.resolved_ms'], 1)} ms`],
    ['  of which first request (validator warm-up)', `${fmt(figures['testing.start.first_request_ms'], 1)} ms`],
    ['  the same request again', `${fmt(figures['testing.start.second_request_ms'], 1)} ms`],
    ['  close()', `${fmt(figures['testing.start.close_ms'], 1)} ms`],
    ['Baseline: bare http.createServer -> first answer, in-process', spread('testing.baseline.bare_http')],
    [`Baseline: spawned tokenbell --memory --seed -> first 200, median (min-max) of ${config.coldStarts}`, spread('testing.baseline.spawned_cli')],
    [`Test kit: reset() after writes, memory store (${fmt(figures['testing.reset.store_kib'], 1)} KiB as JSON), median / p95 of ${fmt(figures['testing.reset.memory.rounds'])}`, `${fmt(figures['testing.reset.memory.median_ms'], 2)} / ${fmt(figures['testing.reset.memory.p95_ms'], 2)} ms`],
    ['  one PUT notification settings on the same instance, median', `${fmt(figures['testing.reset.memory.put_median_ms'], 2)} ms`],
    [`Test kit: reset() after writes, JSON data file, median / p95 of ${fmt(figures['testing.reset.file.rounds'])}`, `${fmt(figures['testing.reset.file.median_ms'], 2)} / ${fmt(figures['testing.reset.file.p95_ms'], 2)} ms`],
    ['  one durable PUT notification settings on the same instance, median', `${fmt(figures['testing.reset.file.put_median_ms'], 2)} ms`],
  );
  for (const c of tokenConnectionCounts) {
    for (const grant of ['refresh_token', 'introspection'] as const) {
      for (const k of ['file', 'postgres'] as const) {
        ratioRows.push([
          `token ${grant}, ${c} conns: tokenbell ${k} / node-oidc-provider${grant === 'refresh_token' ? ' (target >= 1x on file)' : ''}`,
          `${times(`ratio.token.${grant}.c${c}.${k}_vs_peer`)}`,
        ]);
        ratioRows.push([
          `token ${grant}, ${c} conns: tokenbell ${k} / bare Express${grant === 'introspection' ? ' (target >= 90% on file)' : ''}`,
          `${pct(`ratio.token.${grant}.c${c}.${k}_vs_ceiling`)}`,
        ]);
      }
    }
  }
  for (const key of ['unauthenticated_401', 'malformed_400']) {
    ratioRows.push([`errors: ${key} / successful GETs, 50 conns (target >= 100%)`, `${pct(`ratio.errors_vs_success.${key}.c50`)}`]);
  }
  for (const c of tokenConnectionCounts) {
    ratioRows.push([`password grant / KDF alone, ${c} conns, one address (target >= 90%)`, `${pct(`ratio.password_vs_kdf.c${c}`)}`]);
  }
  ratioRows.push(['GET p99 during a password-grant storm / alone', `${times('ratio.get_p99_storm_vs_quiet')}`]);
  ratioRows.push(
    ['cold start, tokenbell --memory: spawn -> first 200 (target <= 300 ms)', `${fmt(figures['cold.memory.spawn_to_first_200_ms'])} ms`],
    ['cold start: first request / the same again (target <= 3x)', `${times('ratio.cold_first_vs_second_request')}`],
  );
  ratioRows.push(
    ['test kit start / spawned CLI start (same seed)', `${times('ratio.testing_start_vs_spawned_cli')}`],
    ['test kit start / bare http.createServer start', `${fmt(figures['ratio.testing_start_vs_bare_http'], 1)}x`],
    ['reset / one PUT, memory store', `${times('ratio.testing_reset_vs_put.memory')}`],
    ['reset / one durable PUT, JSON data file', `${times('ratio.testing_reset_vs_put.file')}`],
  );
  const kv = (list: Array<[string, string]>) => {
    const w = Math.max(...list.map(([k]) => k.length));
    return list.map(([k, v]) => `${k.padEnd(w)}  ${v}`);
  };
  return [
    `tokenbell benchmarks (${quick ? 'quick' : 'full'}: medians of ${config.rounds} round(s), ${config.seconds} s per run; server from packages/server/dist; Node ${process.version}, ${cpus().length} CPUs)`,
    '',
    ...out,
    '',
    ...kv(extra),
    '',
    'Ratios (within this run; ratio figures are medians of per-round ratios)',
    ...kv(ratioRows),
    ...(notes.length ? ['', 'Notes', ...notes.map((n) => `  ${n}`)] : []),
  ].join('\n');
}

async function main(): Promise<void> {
  const began = performance.now();
  const work = await mkdtemp(join(tmpdir(), 'tokenbell-bench-'));
  // The load generator (autocannon, in this process) on one core, every server on the other (lib/processes.ts).
  notes.push(
    pin(pinning?.load ?? '')
      ? `pinning: taskset: this process (autocannon, tinybench, the in-process test kit) on core ${pinning!.load}; every server, node-oidc-provider, bare Express and the KDF runs on core ${pinning!.servers}; PostgreSQL on both (cores ${pinning!.all}) but for the rows that say it is on the servers' core`
      : 'pinning: not pinned (no taskset, or fewer than 2 cores): load generator and servers share the cores',
  );
  try {
    build();
    if (only.has('read') || only.has('sdk')) {
      log('generating the 1k read store');
      const readStore = await generateStore(join(work, 'read.json'), { users: 1_000 });
      const reference = await coldStart(work, readStore);
      if (only.has('read')) await readBenchmark(reference, readStore);
      if (only.has('sdk')) await sdkBenchmark(reference, readStore);
      await reference.stop();
    }
    if (only.has('write')) await writeBenchmark(work);
    if (only.has('token') || only.has('postgres')) {
      log('starting a durable PostgreSQL cluster');
      const cluster = await startCluster({ durable: true });
      // Beside the servers and the load generator on both cores, as the issue's PostgreSQL targets assume.
      placeCluster(cluster, 'all');
      try {
        if (only.has('token')) await tokenBenchmark(work, cluster);
        if (only.has('postgres')) await postgresBenchmark(work, cluster);
      } finally {
        await cluster.stop();
      }
    }
    if (only.has('testing')) await testingBenchmark(work);
    record('total_seconds', (performance.now() - began) / 1000);
    process.stdout.write(`${table()}\n`);
    if (flags.json) {
      await mkdir(dirname(resolve(flags.json)), { recursive: true });
      await writeFile(flags.json, `${JSON.stringify({ mode: quick ? 'quick' : 'full', config, figures, notes }, null, 2)}\n`);
    }
  } finally {
    await stopAll();
    await rm(work, { recursive: true, force: true });
  }
}

main().catch(async (error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  await stopAll();
  process.exit(1);
});
