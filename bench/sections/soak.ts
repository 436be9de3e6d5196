// The soak (issue 42, item 5): the built server on a durable JSON file under minutes of mixed load, its RSS sampled
// all along, so that memory which grows with the requests served (rather than with the data kept) shows as growth
// from the first minute's reading to the last.
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Run } from '../lib/config.js';
import { fmt, log, notes, record } from '../lib/figures.js';
import { type LoadFigures, Pool, load, median, roundRobin } from '../lib/load.js';
import { rssMiB, waitFor200 } from '../lib/processes.js';
import { bearer, formPost, readPath, writeBody, writePath } from '../lib/requests.js';
import { startCeiling, startServer } from '../lib/servers.js';
import { type GeneratedStore, client, generateStore, password } from '../lib/store.js';
import { auth } from './token-endpoint.js';

/** Connections of the mixed load; the grants run beside it, each on connections of its own at a fixed rate. */
export const soakConnections = 20;
/**
 * Grants a second: each one stores a token pair the store keeps for a day (a rotated one too, for replay detection),
 * so their rate decides how much data the soak leaves, and the figure is about memory that grows with the requests
 * served, not with the data kept: at these rates about 3,600 records (some 4 MB of JSON) in five minutes, as in the
 * run issue 42 reports (a 2.2 MB data file). The password grant is also bounded by scrypt (tens a second a core).
 */
export const soakRates = { rotations: 10, passwordGrants: 2 };

/**
 * `config.soakSeconds` of load in back-to-back slices of `config.soakSliceSeconds` on one server: authenticated API
 * reads, durable PUTs of notification settings and GET /oauth/userinfo on 20 connections as fast as they are
 * answered, with refresh-grant rotations (each carrying on with a refresh token an earlier one answered) and the
 * password grant beside them at `soakRates`; RSS and the JS heap after every slice. The early reading is the one at
 * the end of the first minute (the first 20 % in the quick run), when the server has met every kind of request and
 * its heap has grown to its working size; the growth is the median of the readings over the last minute (the last
 * 20 %) over the median of the first minute's. Bare Express after the same reads, for scale.
 */
export async function soakBenchmark({ config, work }: Run): Promise<void> {
  const began = performance.now();
  const slices = Math.max(1, Math.round(config.soakSeconds / config.soakSliceSeconds));
  const early = Math.max(1, Math.round(slices * Math.min(0.2, 60 / config.soakSeconds)));
  // Rotations carry on with the refresh tokens earlier ones answered; at most one a connection is lost at each
  // slice's end.
  const refreshTokens = 2 * slices + 1_000;
  log(`soak: generating the store (1k users, ${refreshTokens} refresh tokens)`);
  const store = await generateStore(join(work, 'soak.json'), { users: 1_000, refreshTokens, accessScopes: ['api', 'openid'] });
  const target = await startServer('soak server (file)', store.file);
  await waitFor200(target, readPath, bearer(store.accessTokens[0]!), 60_000);
  const pool = new Pool([...store.refreshTokens], 'soak refresh token');
  const { mix, rotate, passwordGrant } = soakRequests(store, pool);

  log(`soak: ${config.soakSeconds} s of mixed load, ${slices} slices of ${config.soakSliceSeconds} s`);
  const readings: Readings = { rss: [], heaps: [], mixed: [], rotations: [], passwords: [] };
  // The first scrape loads the runtime's collectors: before the first slice, so that it is in every reading.
  await heapOf(target.url);
  for (let i = 0; i < slices; i++) {
    const [m, r, p] = await Promise.all([
      load({ url: target.url, connections: soakConnections, duration: config.soakSliceSeconds, requests: mix }),
      load({ url: target.url, connections: 2, duration: config.soakSliceSeconds, overallRate: soakRates.rotations, requests: [rotate] }),
      load({ url: target.url, connections: 1, duration: config.soakSliceSeconds, overallRate: soakRates.passwordGrants, requests: passwordGrant }),
    ]);
    pool.check();
    readings.mixed.push(m);
    readings.rotations.push(r);
    readings.passwords.push(p);
    readings.rss.push(rssMiB(target.pid));
    readings.heaps.push(await heapOf(target.url));
  }
  recordSoak(readings, early, slices * config.soakSliceSeconds);
  record('soak.store_before_mib', store.bytes / 2 ** 20);
  record('soak.store_after_mib', (await stat(store.file)).size / 2 ** 20);
  record('soak.journal_after_mib', await stat(`${store.file}.journal`).then((s) => s.size / 2 ** 20, () => 0));
  await target.stop();

  // Bare Express after as many reads as one slice serves, for scale.
  const answer = JSON.stringify({ level: 'participating', notification_email: `${client.id}@bench.example` });
  const ceiling = await startCeiling('bare Express (soak)', [answer]);
  await waitFor200(ceiling, readPath, {}, 60_000);
  await load({ url: `${ceiling.url}${readPath}`, connections: soakConnections, duration: config.soakSliceSeconds });
  record('soak.ceiling_rss_mib', rssMiB(ceiling.pid));
  await ceiling.stop();
  notes.push(
    `soak: JS heap used every ${config.soakSliceSeconds} s (MiB): ${readings.heaps.map((h) => fmt(h.used)).join(' ')}; heap total: ${readings.heaps.map((h) => fmt(h.total)).join(' ')}`,
    `soak: RSS every ${config.soakSliceSeconds} s (MiB): ${readings.rss.map((s) => fmt(s)).join(' ')}; early reading after slice ${early}; the section took ${fmt((performance.now() - began) / 1000, 1)} s`,
  );
}

interface Heap {
  used: number;
  total: number;
  external: number;
}

/** What every slice gave: RSS and the heap after it, and its three load runs. */
interface Readings {
  rss: number[];
  heaps: Heap[];
  mixed: LoadFigures[];
  rotations: LoadFigures[];
  passwords: LoadFigures[];
}

/** The soak's requests: the mixed list each connection cycles through, a rotation, and the password grant. */
function soakRequests(store: GeneratedStore, pool: Pool) {
  const nextToken = roundRobin(store.accessTokens);
  const nextUser = roundRobin(store.usernames);
  const withToken = (spec: { method: string; path: string; headers?: Record<string, string>; body?: string }) => ({
    ...spec,
    setupRequest: (req: { headers?: Record<string, string> }) => ({ ...req, headers: { ...req.headers, ...bearer(nextToken()) } }),
  });
  const read = withToken({ method: 'GET', path: readPath });
  const write = withToken({ method: 'PUT', path: writePath, headers: { 'content-type': 'application/json' }, body: writeBody });
  const userinfo = withToken({ method: 'GET', path: '/oauth/userinfo' });
  // A rotation answers the next refresh token: it goes back on a stack shared by every connection (autocannon clears
  // a connection's context each time it starts its list again), so the pool only covers rotations whose answer a
  // slice's end cut off.
  const returned: string[] = [];
  const rotate = {
    method: 'POST',
    path: '/oauth/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...auth },
    setupRequest: (req: object) => ({ ...req, body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: returned.pop() ?? pool.take() }).toString() }),
    onResponse: (status: number, body: string) => {
      if (status === 200) returned.push((JSON.parse(body) as { refresh_token: string }).refresh_token);
    },
  };
  const mix = [read, write, userinfo, read, write, read, userinfo];
  const passwordGrant = formPost('/oauth/token', () => ({ grant_type: 'password', username: nextUser(), password }));
  return { mix, rotate, passwordGrant };
}

/** The soak's figures from its readings; `early` slices make its first minute (first 20 %). */
function recordSoak({ rss, heaps, mixed, rotations, passwords }: Readings, early: number, seconds: number): void {
  const all = [...mixed, ...rotations, ...passwords];
  const failed = all.reduce((n, r) => n + r.failed, 0);
  record('soak.seconds', seconds);
  record('soak.requests', all.reduce((n, r) => n + r.ok + r.failed, 0));
  record('soak.password_grants', passwords.reduce((n, r) => n + r.ok, 0));
  record('soak.rotations', rotations.reduce((n, r) => n + r.ok, 0));
  record('soak.failed', failed);
  if (failed > 0) {
    const statuses: Record<string, number> = {};
    for (const r of all) for (const [code, n] of Object.entries(r.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
    notes.push(`soak: ${failed} failed requests (statuses ${JSON.stringify(statuses)})`);
  }
  record('soak.rps', median(mixed.map((r) => r.rps)));
  record('soak.rss_early_mib', rss[early - 1]!);
  record('soak.rss_end_mib', rss[rss.length - 1]!);
  record('soak.rss_max_mib', Math.max(...rss));
  for (const [at, heap] of [['early', heaps[early - 1]!], ['end', heaps[heaps.length - 1]!]] as const) {
    record(`soak.heap_used_${at}_mib`, heap.used);
    record(`soak.heap_total_${at}_mib`, heap.total);
    record(`soak.external_${at}_mib`, heap.external);
  }
  record('ratio.soak_rss_end_vs_early', rss[rss.length - 1]! / rss[early - 1]!);
  // The old generation grows between major collections and drops back after one (by 30-40 MiB at this load, more than
  // the target's 10 %), so one reading says little about where RSS is going: the median over the first minute's
  // readings against the median over as many at the end is the figure held to the target.
  const earlyMedian = median(rss.slice(0, early));
  const lateMedian = median(rss.slice(-early));
  record('soak.rss_early_median_mib', earlyMedian);
  record('soak.rss_late_median_mib', lateMedian);
  record('ratio.soak_rss_late_vs_early_median', lateMedian / earlyMedian);
  // The slices' p99 (mixed load), over the early slices and over as many at the end.
  record('soak.p99_early_ms', median(mixed.slice(0, early).map((r) => r.p99)));
  record('soak.p99_late_ms', median(mixed.slice(-early).map((r) => r.p99)));
}

/** The server's JS heap (used and allocated) and external memory in MiB, from its own metrics (prom-client's). */
async function heapOf(url: string): Promise<Heap> {
  const text = await (await fetch(`${url}/-/metrics`)).text();
  const value = (name: string) => {
    const found = new RegExp(`^${name} ([0-9.e+]+)`, 'm').exec(text)?.[1];
    if (found === undefined) throw new Error(`no ${name} in /-/metrics`);
    return Number(found) / 2 ** 20;
  };
  return { used: value('nodejs_heap_size_used_bytes'), total: value('nodejs_heap_size_total_bytes'), external: value('nodejs_external_memory_bytes') };
}
