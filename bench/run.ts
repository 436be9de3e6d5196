// `npm run bench [-- --quick] [-- --json FILE] [-- --only read,sdk,write,token,postgres,testing]`: starts every target as a child process on 127.0.0.1, warms each
// up, measures in interleaved rounds (so drift from other work on the machine hits every target alike), and prints
// one table of medians plus ratios taken within this run. See bench/README.md for what each figure means.
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Bench } from 'tinybench';
import { createTokenbellClient } from '../packages/sdk/src/index.js';
import { type LoadFigures, load, median, roundRobin } from './lib/load.js';
import { type Target, freePort, rssMiB, startTarget, stopAll, waitFor200, waitForListening } from './lib/processes.js';
import { type GeneratedStore, client, generateStore, password, project } from './lib/store.js';
import { copyStoreIntoDatabase } from './lib/postgres.js';
import { createDatabase, startCluster } from '../test/support/postgres.js';
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
  ? { rounds: 1, seconds: 1, warmupSeconds: 0.5, connections: [1, 10, 50], stores: [1_000], tokenAmount: 150, coldStarts: 1, sdkMs: 300, kitStarts: 3, kitResets: 40, kitResetSeconds: 3 }
  : { rounds: 3, seconds: 3, warmupSeconds: 1, connections: [1, 10, 50], stores: [1_000, 10_000, 100_000], tokenAmount: 600, coldStarts: 3, sdkMs: 1_500, kitStarts: 10, kitResets: 200, kitResetSeconds: 6 };
const tokenConnections = 10;

/** Every figure, flat, as the JSON result file holds them: `section.case.metric` → number. */
const figures: Record<string, number> = {};
const notes: string[] = [];
const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

const readPath = '/api/v3/notification_settings';
const writePath = `/api/v3/projects/${project.id}/notification_settings`;
// Level custom with events: the write path that does the most (level, twelve flags, the record's events).
const writeBody = JSON.stringify({ level: 'custom', new_note: true, new_issue: true, close_issue: false, new_merge_request: true, merge_merge_request: false });

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

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

function summarise(prefix: string, runs: LoadFigures[]): void {
  record(`${prefix}.rps`, median(runs.map((r) => r.rps)));
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

async function coldStart(work: string, store: GeneratedStore): Promise<Target> {
  const headers = bearer(store.accessTokens[0]!);
  const totals: number[] = [];
  const listens: number[] = [];
  const firsts: number[] = [];
  const seconds: number[] = [];
  let last: Target | undefined;
  for (let i = 0; i < config.coldStarts; i++) {
    await last?.stop();
    const file = join(work, `cold-${i}.json`);
    await copyFile(store.file, file);
    const target = await startServer('reference server', file);
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
  record('cold.spawn_to_first_200_ms', median(totals));
  record('cold.spawn_to_listening_ms', median(listens));
  record('cold.first_request_ms', median(firsts));
  record('cold.second_request_ms', median(seconds));
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
        runs.set(id, [...(runs.get(id) ?? []), figures]);
        rps[key] = figures.rps;
      }
      // Ratios per round, then the median: both sides of each ratio ran back to back under the same load.
      const add = (name: string, value: number) => ratios.set(name, [...(ratios.get(name) ?? []), value]);
      add(`ratio.read_vs_ceiling.c${connections}`, rps.reference! / rps.ceiling!);
      add(`ratio.read_vs_prism.c${connections}`, rps.reference! / rps.prism!);
    }
  }
  for (const [id, list] of runs) summarise(id, list);
  for (const [name, list] of ratios) record(name, median(list));
  record('rss.reference_after_read_mib', rssMiB(reference.pid));
  record('rss.prism_mib', rssMiB(prism.pid));
  await ceiling.stop();
  await prism.stop();
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
        runs.set(id, [...(runs.get(id) ?? []), result]);
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
 * The same 1k-user store on the JSON file and on PostgreSQL (a durable cluster: fsync on, on the same two cores as
 * the servers and the load), measured in interleaved rounds: authenticated reads, durable PUTs, code and refresh grants.
 */
async function postgresBenchmark(work: string): Promise<void> {
  const single = config.tokenAmount * (config.rounds + 1);
  log('starting a durable PostgreSQL cluster and copying a 1k-user store into it');
  const cluster = await startCluster({ durable: true });
  try {
    const store = await generateStore(join(work, 'postgres.json'), { users: 1_000, codes: single, refreshTokens: single });
    const database = await createDatabase(cluster.url);
    await migrate(database.url);
    await copyStoreIntoDatabase(store.file, database.url);
    const port = await freePort();
    const targets = {
      file: await startServer('file server (beside PostgreSQL)', store.file),
      postgres: startTarget('PostgreSQL server', process.execPath, [join(root, 'packages/server/dist/cli.js'), '--port', String(port), '--database-url', database.url], port, { NODE_ENV: 'production' }),
    };
    for (const target of Object.values(targets)) await waitFor200(target, readPath, bearer(store.accessTokens[0]!), 60_000);
    const kinds = ['file', 'postgres'] as const;
    // Each store has its own copy of the codes and refresh tokens, so each uses every one once.
    const next = Object.fromEntries(kinds.map((k) => [k, { token: roundRobin(store.accessTokens), code: roundRobin(store.codes), refresh: roundRobin(store.refreshTokens) }])) as Record<(typeof kinds)[number], { token: () => string; code: () => string; refresh: () => string }>;
    const read = (k: (typeof kinds)[number], connections: number, duration: number) =>
      load({ url: targets[k].url, connections, duration, requests: [{ method: 'GET', path: readPath, setupRequest: (req: object) => ({ ...req, headers: bearer(next[k].token()) }) }] });
    const write = (k: (typeof kinds)[number], connections: number, duration: number) =>
      load({ url: targets[k].url, connections, duration, requests: [{ method: 'PUT', path: writePath, headers: { 'content-type': 'application/json' }, body: writeBody, setupRequest: (req: { headers?: Record<string, string> }) => ({ ...req, headers: { ...req.headers, ...bearer(next[k].token()) } }) }] });
    const clientAuth = { client_id: client.id, client_secret: client.secret };
    const grant = (k: (typeof kinds)[number], kind: 'authorization_code' | 'refresh_token', amount: number) =>
      load({
        url: targets[k].url,
        connections: tokenConnections,
        amount,
        requests: [
          {
            method: 'POST',
            path: '/oauth/token',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            setupRequest: (req: object) => ({
              ...req,
              body: new URLSearchParams(kind === 'authorization_code' ? { grant_type: kind, code: next[k].code(), redirect_uri: client.redirectUri, ...clientAuth } : { grant_type: kind, refresh_token: next[k].refresh(), ...clientAuth }).toString(),
            }),
          },
        ],
      });
    const readConnections = [10, 50];
    const writeConnections = 50;
    for (const k of kinds) {
      await read(k, 10, config.warmupSeconds);
      await write(k, 10, config.warmupSeconds);
      for (const kind of ['authorization_code', 'refresh_token'] as const) await grant(k, kind, config.tokenAmount);
    }
    const runs = new Map<string, LoadFigures[]>();
    const ratios = new Map<string, number[]>();
    const measure = async (id: string, run: (k: (typeof kinds)[number]) => Promise<LoadFigures>) => {
      const pair = { file: await run('file'), postgres: await run('postgres') };
      for (const k of kinds) runs.set(`postgres.${id}.${k}`, [...(runs.get(`postgres.${id}.${k}`) ?? []), pair[k]]);
      ratios.set(id, [...(ratios.get(id) ?? []), pair.postgres.rps / pair.file.rps]);
    };
    for (let round = 0; round < config.rounds; round++) {
      log(`PostgreSQL round ${round + 1}/${config.rounds}`);
      for (const c of readConnections) await measure(`read.c${c}`, (k) => read(k, c, config.seconds));
      await measure(`write.c${writeConnections}`, (k) => write(k, writeConnections, config.seconds));
      for (const kind of ['authorization_code', 'refresh_token'] as const) await measure(`token.${kind}.c${tokenConnections}`, (k) => grant(k, kind, config.tokenAmount));
    }
    for (const [id, list] of runs) summarise(id, list);
    for (const [id, list] of ratios) record(`ratio.postgres_vs_file.${id}`, median(list));
    record('rss.postgres_server_mib', rssMiB(targets.postgres.pid));
    for (const target of Object.values(targets)) await target.stop();
  } finally {
    await cluster.stop();
  }
}

async function tokenBenchmark(work: string): Promise<void> {
  // Enough single-use codes and refresh tokens for the warm-up and every round.
  const single = config.tokenAmount * (config.rounds + 1);
  log(`generating the token store (${single} codes, ${single} refresh tokens)`);
  const store = await generateStore(join(work, 'token.json'), { users: 1_000, codes: single, refreshTokens: single });
  const target = await startServer('token server', store.file);
  await waitFor200(target, readPath, bearer(store.accessTokens[0]!), 60_000);
  const form = (params: Record<string, string>) => new URLSearchParams(params).toString();
  const post = (body: () => string) => [
    {
      method: 'POST',
      path: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      setupRequest: (req: object) => ({ ...req, body: body() }),
    },
  ];
  const clientAuth = { client_id: client.id, client_secret: client.secret };
  const nextCode = roundRobin(store.codes);
  const nextRefresh = roundRobin(store.refreshTokens);
  const nextUser = roundRobin(store.usernames);
  const grants = {
    authorization_code: () => form({ grant_type: 'authorization_code', code: nextCode(), redirect_uri: client.redirectUri, ...clientAuth }),
    refresh_token: () => form({ grant_type: 'refresh_token', refresh_token: nextRefresh(), ...clientAuth }),
    password: () => form({ grant_type: 'password', username: nextUser(), password }),
  };
  // Codes and refresh tokens are single-use, so those runs are a fixed number of requests (each code used once);
  // the password grant is scrypt-bound and runs for a fixed time.
  const run = (grant: keyof typeof grants, amount: number, seconds: number) =>
    grant === 'password'
      ? load({ url: target.url, connections: tokenConnections, duration: seconds, requests: post(grants[grant]) })
      : load({ url: target.url, connections: tokenConnections, amount, requests: post(grants[grant]) });
  for (const grant of Object.keys(grants) as Array<keyof typeof grants>) await run(grant, config.tokenAmount, config.warmupSeconds);
  const runs = new Map<string, LoadFigures[]>();
  for (let round = 0; round < config.rounds; round++) {
    for (const grant of Object.keys(grants) as Array<keyof typeof grants>) {
      log(`token round ${round + 1}/${config.rounds}: ${grant}`);
      const result = await run(grant, config.tokenAmount, config.seconds);
      const id = `token.${grant}.c${tokenConnections}`;
      runs.set(id, [...(runs.get(id) ?? []), result]);
    }
  }
  for (const [id, list] of runs) summarise(id, list);
  await target.stop();
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
  const pat = (token: string) => ({ 'private-token': token });
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

function table(): string {
  const rows: string[][] = [['benchmark', 'target / case', 'conns', 'store', 'req/s', 'p50 ms', 'p99 ms', 'failed', 'acks/file write']];
  // autocannon records whole milliseconds, so a p50 of 0 means under a millisecond.
  const line = (section: string, label: string, conns: string, store: string, prefix: string) =>
    rows.push([
      section,
      label,
      conns,
      store,
      fmt(figures[`${prefix}.rps`]),
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
  for (const grant of ['authorization_code', 'refresh_token', 'password']) {
    line('Token endpoint', `${grant} grant`, String(tokenConnections), '1k', `token.${grant}.c${tokenConnections}`);
  }
  for (const [label, id, conns] of [
    ['authenticated GET', 'read.c10', '10'],
    ['authenticated GET', 'read.c50', '50'],
    ['PUT project settings (durable)', 'write.c50', '50'],
    ['authorization_code grant', `token.authorization_code.c${tokenConnections}`, String(tokenConnections)],
    ['refresh_token grant', `token.refresh_token.c${tokenConnections}`, String(tokenConnections)],
  ] as const) {
    line('Store: JSON file', label, conns, '1k', `postgres.${id}.file`);
    line('Store: PostgreSQL', label, conns, '1k', `postgres.${id}.postgres`);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const render = (r: string[]) => r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ');
  const out = [render(rows[0]!), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.slice(1).map(render)];

  const extra: Array<[string, string]> = [
    ['SDK: plain fetch, p50 per call', `${fmt(figures['sdk.fetch.p50_ms'], 3)} ms`],
    ['SDK: client.notificationSettings.global.get(), p50 per call', `${fmt(figures['sdk.client.p50_ms'], 3)} ms`],
    ['Cold start: spawn -> first 200 (median)', `${fmt(figures['cold.spawn_to_first_200_ms'])} ms`],
    ['  of which spawn -> listening', `${fmt(figures['cold.spawn_to_listening_ms'])} ms`],
    ['  of which first request', `${fmt(figures['cold.first_request_ms'], 1)} ms`],
    ['  the same request again', `${fmt(figures['cold.second_request_ms'], 1)} ms`],
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
    ratioRows.push([`read: reference / ceiling, ${c} conns (target >= 80%)`, `${fmt(figures[`ratio.read_vs_ceiling.c${c}`]! * 100)} %`]);
  }
  for (const c of config.connections) {
    ratioRows.push([`read: reference / Prism, ${c} conns (target >= 2.5x)`, `${fmt(figures[`ratio.read_vs_prism.c${c}`], 2)}x`]);
  }
  const top = Math.max(...config.connections);
  if (config.stores.includes(10_000)) ratioRows.push([`write: 10k store, ${top} conns (target >= 2,000/s)`, `${fmt(figures[`write.u10000.c${top}.rps`])} writes/s`]);
  const smallest = config.stores[0]!;
  const largest = config.stores[config.stores.length - 1]!;
  if (largest > smallest) {
    ratioRows.push([
      `write: cost per write ${largest / 1000}k vs ${smallest / 1000}k store, ${top} conns (store ${largest / smallest}x)`,
      `${fmt(figures[`ratio.write_cost_${largest}_vs_${smallest}.c${top}`], 2)}x, exponent ${fmt(figures[`ratio.write_cost_growth_exponent.c${top}`], 2)} (target < 1)`,
    ]);
  }
  ratioRows.push(['SDK overhead over plain fetch (target <= 10%)', `${fmt(figures['ratio.sdk_overhead_pct'], 1)} %`]);
  for (const [id, label, target] of [
    ['read.c10', 'read, 10 conns', 60],
    ['read.c50', 'read, 50 conns', 60],
    ['write.c50', 'durable write, 50 conns', 50],
    [`token.authorization_code.c${tokenConnections}`, 'code grant', undefined],
    [`token.refresh_token.c${tokenConnections}`, 'refresh grant', undefined],
  ] as const) {
    ratioRows.push([`PostgreSQL / JSON file, ${label}${target ? ` (target >= ${target}%)` : ''}`, `${fmt(figures[`ratio.postgres_vs_file.${id}`]! * 100)} %`]);
  }
  extra.push(['RSS: PostgreSQL server after its benchmark', `${fmt(figures['rss.postgres_server_mib'])} MiB`]);
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
  ratioRows.push(
    ['test kit start / spawned CLI start (same seed)', `${fmt(figures['ratio.testing_start_vs_spawned_cli'], 2)}x`],
    ['test kit start / bare http.createServer start', `${fmt(figures['ratio.testing_start_vs_bare_http'], 1)}x`],
    ['reset / one PUT, memory store', `${fmt(figures['ratio.testing_reset_vs_put.memory'], 2)}x`],
    ['reset / one durable PUT, JSON data file', `${fmt(figures['ratio.testing_reset_vs_put.file'], 2)}x`],
  );
  const kv = (list: Array<[string, string]>) => {
    const w = Math.max(...list.map(([k]) => k.length));
    return list.map(([k, v]) => `${k.padEnd(w)}  ${v}`);
  };
  return [
    `tokenbell benchmarks (${quick ? 'quick' : 'full'}: medians of ${config.rounds} round(s), ${config.seconds} s per run; server from packages/server/dist; Node ${process.version}, ${availableParallelism()} CPUs)`,
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
    if (only.has('token')) await tokenBenchmark(work);
    if (only.has('postgres')) await postgresBenchmark(work);
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
