// The token endpoint: refresh grant, introspection and code grant on tokenbell's two stores, node-oidc-provider (the
// peer) and a bare Express form POST (the ceiling), every request with a fresh single-use value from a pool.
import { join } from 'node:path';
import type { TestCluster } from '../../test/support/postgres.js';
import { type Config, type Run, tokenConnectionCounts, tokenConnections } from '../lib/config.js';
import { append, fmt, log, notes, record, recordRounds } from '../lib/figures.js';
import { type LoadFigures, Pool, load, roundRobin } from '../lib/load.js';
import { storeDatabase } from '../lib/postgres.js';
import { type Target, rssMiB, storeStats, waitFor200 } from '../lib/processes.js';
import { basic, bearer, formPost, readPath } from '../lib/requests.js';
import { startCeiling, startPeer, startPostgresServer, startServer } from '../lib/servers.js';
import { type GeneratedStore, client, generateStore } from '../lib/store.js';

export type TokenKey = 'file' | 'postgres' | 'peer' | 'ceiling';
export const tokenTargets: Array<{ key: TokenKey; label: string }> = [
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

type Stores = 'file' | 'postgres';

export const auth = basic(client.id, client.secret);
const codeBody = (pool: Pool) => () => ({ grant_type: 'authorization_code', code: pool.take(), redirect_uri: client.redirectUri });
const refreshBody = (pool: Pool) => () => ({ grant_type: 'refresh_token', refresh_token: pool.take() });

// Three times the first run's rate (later runs are warmer, and a busy machine may quieten), and never under
// 3,000 a second.
const poolSize = (config: Config, rate: number) => Math.ceil(Math.max(rate * 3, 3_000) * config.seconds) + 1_000;

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
export async function tokenBenchmark(run: Run, cluster: TestCluster): Promise<void> {
  const { config } = run;
  const began = performance.now();
  const fastest = await sizingRate(run);
  const perRun = poolSize(config, fastest);
  // Runs that use tokenbell's pools: a warm-up and one per round for codes (10 connections); a warm-up and two per
  // round for refresh tokens (10 and 50).
  const codes = perRun * (config.rounds + 1);
  const refreshTokens = perRun * (2 * config.rounds + 1);
  record('token.pool.sizing_rps', fastest);
  record('token.pool.per_run', perRun);
  log(`token: generating the store (${codes} codes, ${refreshTokens} refresh tokens) and copying it into PostgreSQL`);
  const store = await generateStore(join(run.work, 'token.json'), { users: 1_000, codes, refreshTokens });
  const statsFile = join(run.work, 'token-file-stats.json');
  const { targets, codePools } = await startTokenTargets(store, await storeDatabase(cluster, store.file), statsFile);
  const requests = tokenRequests(config, targets, codePools, store.refreshTokens[0]!, perRun, statsFile);
  await tokenRounds(config, targets, requests);
  // How many rotations one durable write (a journal sync, or a compaction) carried on the file store, all rounds.
  for (const [c, counts] of requests.coalescing) {
    record(`token.refresh_token.c${c}.file.acknowledged`, counts.acknowledged);
    record(`token.refresh_token.c${c}.file.file_writes`, counts.fileWrites);
    record(`token.refresh_token.c${c}.file.commits_per_file_write`, counts.acknowledged / counts.fileWrites);
  }
  record('rss.token_file_after_runs_mib', rssMiB(targets.file.target.pid));
  record('rss.token_postgres_after_runs_mib', rssMiB(targets.postgres.target.pid));
  await Promise.all(Object.values(targets).map((t) => t.target.stop()));
  notes.push(
    `token: pools sized from a first short run (${fmt(fastest)} grants/s at 50 connections): ${fmt(perRun)} codes or refresh tokens per run on tokenbell (${fmt(codes)} codes, ${fmt(refreshTokens)} refresh tokens in its store), the peer refilled to ${fmt(requests.peerPerRun())} before each run; the section took ${fmt((performance.now() - began) / 1000, 1)} s`,
  );
}

/** The fastest grant rate of a first short run on a throwaway server, which sizes every pool of the section. */
async function sizingRate({ config, work }: Run): Promise<number> {
  const sizingPool = 20_000;
  log(`token: sizing the pools on a throwaway server (${sizingPool} codes, ${sizingPool} refresh tokens)`);
  const sizing = await generateStore(join(work, 'token-sizing.json'), { users: 1_000, codes: sizingPool, refreshTokens: sizingPool });
  const sizer = await startServer('token server (sizing)', sizing.file);
  await waitFor200(sizer, readPath, bearer(sizing.accessTokens[0]!), 60_000);
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
  return fastest;
}

async function startTokenTargets(store: GeneratedStore, databaseUrl: string, statsFile: string): Promise<{ targets: Record<TokenKey, TokenTarget>; codePools: Record<Stores, Pool> }> {
  const file = await startServer('token server (file)', store.file, { TOKENBELL_STORE_STATS: statsFile });
  const postgres = await startPostgresServer('token server (PostgreSQL)', databaseUrl);
  for (const t of [file, postgres]) await waitFor200(t, readPath, bearer(store.accessTokens[0]!), 60_000);
  record('rss.token_file_after_start_mib', rssMiB(file.pid));
  record('rss.token_postgres_after_start_mib', rssMiB(postgres.pid));

  // Each store has its own copy of the codes and refresh tokens, so each uses every one once.
  const pools = {
    file: { codes: new Pool([...store.codes], 'file code'), refresh: new Pool([...store.refreshTokens], 'file refresh token') },
    postgres: { codes: new Pool([...store.codes], 'PostgreSQL code'), refresh: new Pool([...store.refreshTokens], 'PostgreSQL refresh token') },
  };
  const ceiling = await startTokenCeiling(file, store, pools.file.refresh);
  const peer = await startPeer();
  const peerAccess = (await peer.mint(0, 1_000)).accessTokens;
  const peerRefresh = new Pool([], 'node-oidc-provider refresh token');
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
  return { targets, codePools: { file: pools.file.codes, postgres: pools.postgres.codes } };
}

/** The ceiling answers what tokenbell answers (one refresh and one introspection of the file server's, shape only). */
async function startTokenCeiling(file: Target, store: GeneratedStore, refresh: Pool): Promise<Target> {
  const answer = async (path: string, body: Record<string, string>) => {
    const response = await fetch(`${file.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...auth }, body: new URLSearchParams(body).toString() });
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
    return response.json() as Promise<unknown>;
  };
  const forms = {
    '/oauth/token': await answer('/oauth/token', refreshBody(refresh)()),
    '/oauth/introspect': await answer('/oauth/introspect', { token: store.accessTokens[0]! }),
  };
  const ceiling = await startCeiling('bare Express (form POST)', ['{}', JSON.stringify(forms)]);
  await waitFor200(ceiling, readPath, {}, 60_000);
  return ceiling;
}

type TokenRequests = ReturnType<typeof tokenRequests>;

/** One time-bounded run of each grant on a target, each checking afterwards that its pool did not run dry. */
function tokenRequests(config: Config, targets: Record<TokenKey, TokenTarget>, codePools: Record<Stores, Pool>, ceilingRefresh: string, perRun: number, statsFile: string) {
  let peerPerRun = perRun;
  /** The file store's acknowledged commits and durable writes over the measured refresh runs, per connection count. */
  const coalescing = new Map<number, { acknowledged: number; fileWrites: number }>();
  const refresh = async (t: TokenTarget, connections: number, duration: number, measured = false) => {
    await t.refill?.(peerPerRun);
    const body = t.key === 'ceiling' ? () => ({ grant_type: 'refresh_token', refresh_token: ceilingRefresh }) : refreshBody(t.refresh);
    const counted = measured && t.key === 'file';
    const before = counted ? await storeStats(t.target, statsFile) : null;
    const result = await load({ url: t.target.url, connections, duration, requests: formPost(t.tokenPath, body, auth) });
    if (before) {
      const after = await storeStats(t.target, statsFile);
      const counts = coalescing.get(connections) ?? { acknowledged: 0, fileWrites: 0 };
      counts.acknowledged += after.acknowledged - before.acknowledged;
      counts.fileWrites += after.fileWrites - before.fileWrites;
      coalescing.set(connections, counts);
    }
    t.refresh.check();
    if (t.key === 'peer') peerPerRun = Math.max(peerPerRun, poolSize(config, result.rps));
    return result;
  };
  const introspect = (t: TokenTarget, connections: number, duration: number) =>
    load({ url: t.target.url, connections, duration, requests: formPost(t.introspectPath, () => ({ token: t.introspect() }), auth) });
  const code = async (k: Stores, connections: number, duration: number) => {
    const result = await load({ url: targets[k].target.url, connections, duration, requests: formPost('/oauth/token', codeBody(codePools[k]), auth) });
    codePools[k].check();
    return result;
  };
  return { refresh, introspect, code, peerPerRun: () => peerPerRun, coalescing };
}

async function tokenRounds(config: Config, targets: Record<TokenKey, TokenTarget>, { refresh, introspect, code }: TokenRequests): Promise<void> {
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
          const result = await (grant === 'refresh_token' ? refresh(targets[key], c, config.seconds, true) : run(targets[key], c, config.seconds));
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
  recordRounds(runs, ratios);
}
