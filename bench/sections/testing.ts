// The test kit (`@tokenbell/server/testing`, issue 19) as a suite uses it, from the build: starts against a bare
// http.createServer and a spawned CLI, then helpers.reset() against one PUT; the first token in a fresh process
// against oauth2-mock-server's, and the memory a long suite's starts and resets leave behind.
import { createServer } from 'node:http';
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { administrator, publicApplication, writeContractSeed } from '../../test/contract/seed.js';
import type { Config, Run } from '../lib/config.js';
import { append, figures, fmt, log, notes, record, recordMedian } from '../lib/figures.js';
import { median } from '../lib/load.js';
import { rssMiB, waitFor200 } from '../lib/processes.js';
import { pat, readPath, writeBody } from '../lib/requests.js';
import { root, runOnServerCore, startCeiling, startSeeded } from '../lib/servers.js';

type StartTokenbell = typeof import('../../packages/server/src/testing.js').startTokenbell;

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
 * startTokenbell() on the contract suite's seed (the example fixture plus an administrator and a public application,
 * the larger of the realistic seeds) to a first authenticated answer, against a bare http.createServer and a spawned
 * `--memory --seed` CLI on the same seed (both hash the seed's passwords with the kit's cheap parameters); then
 * helpers.reset() after a few writes, which is what a suite pays before every test, against one PUT.
 */
export async function testingBenchmark({ config, work }: Run): Promise<void> {
  const began = performance.now();
  // The built module, as an installed package is imported: the bench measures dist, never the sources through tsx.
  const { startTokenbell } = (await import(pathToFileURL(join(root, 'packages/server/dist/testing.js')).href)) as typeof import('../../packages/server/src/testing.js');
  const seed = await writeContractSeed(work);
  const fixture = JSON.parse(await readFile(seed, 'utf8')) as Record<'users' | 'groups' | 'projects' | 'applications', unknown[]>;
  const kit = await kitStarts(config, startTokenbell, seed);
  const bare = await bareHttpStarts(config);
  const spawned = await spawnedCliStarts(config, seed);
  record('ratio.testing_start_vs_spawned_cli', median(kit) / median(spawned));
  record('ratio.testing_start_vs_bare_http', median(kit) / median(bare));
  for (const store of ['memory', 'file'] as const) await kitResets(config, startTokenbell, seed, join(work, 'testing-kit.json'), store);
  await firstTokens(config, seed);
  kitMemory(config, seed);
  record('testing.section_seconds', (performance.now() - began) / 1000);
  notes.push(
    `testing: seed = the contract suite's (test/contract/seed.ts): ${fixture.users.length} users, ${fixture.groups.length} groups, ${fixture.projects.length} projects, ${fixture.applications.length} applications; each reset undoes 1 user, 1 personal access token and 1 notification setting; the section took ${fmt(figures['testing.section_seconds'], 1)} s`,
  );
}

// Personal access tokens go in PRIVATE-TOKEN; Bearer is for OAuth tokens.
const me = (url: string, token: string) => fetch(`${url}/api/v4/user`, { headers: pat(token) });

/** Sequential startTokenbell() -> first answer -> close(); the times to the first answer. */
async function kitStarts(config: Config, startTokenbell: StartTokenbell, seed: string): Promise<number[]> {
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
  return starts.total;
}

async function bareHttpStarts(config: Config): Promise<number[]> {
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
  return bare;
}

/** The CLI on the same seed, in memory: what a suite that spawns the server instead waits for. */
async function spawnedCliStarts(config: Config, seed: string): Promise<number[]> {
  const spawned: number[] = [];
  for (let i = 0; i < config.coldStarts; i++) {
    const target = await startSeeded(seed, ['--log-level', 'silent']);
    try {
      spawned.push((await waitFor200(target, '/api/v4/user', pat(administrator.pat))) - target.spawnedAt);
    } finally {
      await target.stop();
    }
  }
  recordSpread('testing.baseline.spawned_cli', spawned);
  return spawned;
}

/** Rounds of writes then helpers.reset() on one kit, on the memory store or on `dataFile`, against the PUT alone. */
async function kitResets(config: Config, startTokenbell: StartTokenbell, seed: string, dataFile: string, store: 'memory' | 'file'): Promise<void> {
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
    // Each round hashes the new user's password (the kit's cheap scrypt, about a millisecond; tens with
    // passwordHashing: 'production'), so a slow machine gets fewer rounds rather than a longer run.
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

// The built kit, for the helpers that run it in a process of their own.
const testingJs = () => join(root, 'packages/server/dist/testing.js');

/**
 * startTokenbell() -> kit.signIn() -> a first access token, against oauth2-mock-server's start() -> a first
 * client_credentials token, each first in a fresh process (bench/targets/kit-first-token.ts and
 * oauth2-mock-server.ts) on the servers' core, the two in turn in every round; each module's import timed apart. The
 * kit's process's RSS once started, against a bare Express process's once listening (bench/targets/ceiling.ts).
 */
async function firstTokens(config: Config, seed: string): Promise<void> {
  log(`test kit: first token in a fresh process against oauth2-mock-server, ${config.coldStarts} round(s)`);
  const times = new Map<string, number[]>();
  for (let i = 0; i < config.coldStarts; i++) {
    const kit = runOnServerCore<{ import_ms: number; start_to_token_ms: number; rss_after_start_mib: number }>('kit-first-token', [testingJs(), seed, publicApplication.clientId]);
    const ceiling = await startCeiling('bare Express (RSS after start)', ['{}']);
    await waitFor200(ceiling, readPath, {}, 60_000);
    append(times, 'ceiling.rss_after_start_mib', rssMiB(ceiling.pid));
    await ceiling.stop();
    append(times, 'tokenbell.rss_after_start_mib', kit.rss_after_start_mib);
    append(times, 'ratio_rss', kit.rss_after_start_mib / times.get('ceiling.rss_after_start_mib')!.at(-1)!);
    const mock = runOnServerCore<{ import_ms: number; start_to_token_ms: number }>('oauth2-mock-server', []);
    for (const [key, value] of [['tokenbell', kit], ['mock', mock]] as const) {
      append(times, `${key}.start_to_token_ms`, value.start_to_token_ms);
      append(times, `${key}.import_ms`, value.import_ms);
    }
    append(times, 'ratio', kit.start_to_token_ms / mock.start_to_token_ms);
    append(times, 'ratio_with_import', (kit.import_ms + kit.start_to_token_ms) / (mock.import_ms + mock.start_to_token_ms));
  }
  for (const key of ['tokenbell', 'mock']) {
    for (const m of ['start_to_token_ms', 'import_ms']) recordMedian(`testing.first_token.${key}.${m}`, times.get(`${key}.${m}`)!);
  }
  recordMedian('ratio.testing_first_token_vs_oauth2_mock_server', times.get('ratio')!);
  recordMedian('ratio.testing_first_token_with_import_vs_oauth2_mock_server', times.get('ratio_with_import')!);
  recordMedian('testing.first_token.tokenbell.rss_after_start_mib', times.get('tokenbell.rss_after_start_mib')!);
  recordMedian('testing.first_token.ceiling.rss_after_start_mib', times.get('ceiling.rss_after_start_mib')!);
  recordMedian('ratio.testing_rss_after_start_vs_bare_express', times.get('ratio_rss')!);
}

/**
 * RSS of one process that runs `kitCycles` startTokenbell() -> GET -> close() cycles, then `kitCycleResets` rounds
 * of a PUT and helpers.reset() on one instance (bench/targets/kit-cycles.ts, with --expose-gc so each reading comes
 * after a full collection); growth from the reading after the first cycle.
 */
function kitMemory(config: Config, seed: string): void {
  log(`test kit: RSS over ${config.kitCycles} start/close cycles and ${config.kitCycleResets} resets in one process`);
  const result = runOnServerCore<{ gc: boolean; after_first_mib: number; after_cycles_mib: number; after_resets_mib: number; heap: number[]; heap_total: number[]; cycles_ms: number; resets_ms: number }>(
    'kit-cycles',
    [testingJs(), seed, String(config.kitCycles), String(config.kitCycleResets)],
    ['--expose-gc'],
  );
  const prefix = 'testing.kit_memory';
  record(`${prefix}.cycles`, config.kitCycles);
  record(`${prefix}.resets`, config.kitCycleResets);
  record(`${prefix}.gc_exposed`, result.gc ? 1 : 0);
  record(`${prefix}.after_first_mib`, result.after_first_mib);
  record(`${prefix}.after_cycles_mib`, result.after_cycles_mib);
  record(`${prefix}.after_resets_mib`, result.after_resets_mib);
  ['after_first', 'after_cycles', 'after_resets'].forEach((at, i) => {
    record(`${prefix}.heap_${at}_mib`, result.heap[i]!);
    record(`${prefix}.heap_total_${at}_mib`, result.heap_total[i]!);
  });
  record(`${prefix}.growth_after_cycles_pct`, (result.after_cycles_mib / result.after_first_mib - 1) * 100);
  record(`${prefix}.growth_after_resets_pct`, (result.after_resets_mib / result.after_first_mib - 1) * 100);
  notes.push(
    `testing: kit memory: ${config.kitCycles} startTokenbell()/GET/close() cycles took ${fmt(result.cycles_ms / 1000, 1)} s, ${config.kitCycleResets} PUT + reset() rounds ${fmt(result.resets_ms / 1000, 1)} s; RSS read ${result.gc ? 'after global.gc() (--expose-gc)' : 'without a forced collection (gc not exposed)'}; JS heap in use at the three readings ${result.heap.map((h) => fmt(h, 1)).join(' / ')} MiB, allocated ${result.heap_total.map((h) => fmt(h, 1)).join(' / ')} MiB`,
  );
}
