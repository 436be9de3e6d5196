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
import { client, generateStore, password } from '../lib/store.js';
import { auth } from './token-endpoint.js';

/** Connections of the mixed load; the password grant runs beside it on one more, at `passwordRate` a second. */
export const soakConnections = 20;
// scrypt allows tens of checks a second on the servers' core: a few a second keep the grant in the mix without
// letting it take the core from the rest.
const passwordRate = 2;

/**
 * `config.soakSeconds` of mixed load in back-to-back slices of `config.soakSliceSeconds` on one server (20
 * connections; each cycles through authenticated API reads, durable PUTs of notification settings, refresh-grant
 * rotations that each carry on with the refresh token the last one answered, and GET /oauth/userinfo), with the
 * password grant beside it at 2 a second; RSS after every slice. The early reading is the one at the end of the
 * first minute (the first 20 % in the quick run), when the server has met every kind of request and its heap has
 * grown to its working size; the growth is the last reading over it. Bare Express after the same reads, for scale.
 */
export async function soakBenchmark({ config, work }: Run): Promise<void> {
  const began = performance.now();
  const slices = Math.max(1, Math.round(config.soakSeconds / config.soakSliceSeconds));
  const early = Math.max(1, Math.round(slices * Math.min(0.2, 60 / config.soakSeconds)));
  // Rotations carry on with the refresh tokens earlier ones answered; at most one a connection is lost at each
  // slice's end.
  const refreshTokens = (soakConnections + 1) * slices + 1_000;
  log(`soak: generating the store (1k users, ${refreshTokens} refresh tokens)`);
  const store = await generateStore(join(work, 'soak.json'), { users: 1_000, refreshTokens, accessScopes: ['api', 'openid'] });
  const target = await startServer('soak server (file)', store.file);
  await waitFor200(target, readPath, bearer(store.accessTokens[0]!), 60_000);
  const pool = new Pool([...store.refreshTokens], 'soak refresh token');
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
  const mix = [read, write, userinfo, rotate, read, write, read, userinfo];
  const passwordGrant = formPost('/oauth/token', () => ({ grant_type: 'password', username: nextUser(), password }));

  log(`soak: ${config.soakSeconds} s of mixed load, ${slices} slices of ${config.soakSliceSeconds} s`);
  const samples: number[] = [];
  const mixed: LoadFigures[] = [];
  const passwords: LoadFigures[] = [];
  for (let i = 0; i < slices; i++) {
    const [m, p] = await Promise.all([
      load({ url: target.url, connections: soakConnections, duration: config.soakSliceSeconds, requests: mix }),
      load({ url: target.url, connections: 1, duration: config.soakSliceSeconds, overallRate: passwordRate, requests: passwordGrant }),
    ]);
    pool.check();
    mixed.push(m);
    passwords.push(p);
    samples.push(rssMiB(target.pid));
  }
  const all = [...mixed, ...passwords];
  const failed = all.reduce((n, r) => n + r.failed, 0);
  record('soak.seconds', slices * config.soakSliceSeconds);
  record('soak.requests', all.reduce((n, r) => n + r.ok + r.failed, 0));
  record('soak.password_grants', passwords.reduce((n, r) => n + r.ok, 0));
  record('soak.failed', failed);
  if (failed > 0) {
    const statuses: Record<string, number> = {};
    for (const r of all) for (const [code, n] of Object.entries(r.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
    notes.push(`soak: ${failed} failed requests (statuses ${JSON.stringify(statuses)})`);
  }
  record('soak.rps', median(mixed.map((r) => r.rps)));
  record('soak.rss_early_mib', samples[early - 1]!);
  record('soak.rss_end_mib', samples[samples.length - 1]!);
  record('soak.rss_max_mib', Math.max(...samples));
  record('ratio.soak_rss_end_vs_early', samples[samples.length - 1]! / samples[early - 1]!);
  // The slices' p99 (mixed load), over the early slices and over as many at the end.
  record('soak.p99_early_ms', median(mixed.slice(0, early).map((r) => r.p99)));
  record('soak.p99_late_ms', median(mixed.slice(-early).map((r) => r.p99)));
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
    `soak: RSS every ${config.soakSliceSeconds} s (MiB): ${samples.map((s) => fmt(s)).join(' ')}; early reading after slice ${early}; the section took ${fmt((performance.now() - began) / 1000, 1)} s`,
  );
}
