// Item 6 of issue 20: the password grant from one address against the KDF alone, and authenticated GETs during a
// password-grant storm.
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Config, type Run, tokenConnectionCounts } from '../lib/config.js';
import { append, log, record, recordMedian, summarise } from '../lib/figures.js';
import { type LoadFigures, load, median, roundRobin } from '../lib/load.js';
import { type Target, waitFor200 } from '../lib/processes.js';
import { bearer, formPost, readPath } from '../lib/requests.js';
import { runOnServerCore, startServer } from '../lib/servers.js';
import { type GeneratedStore, generateStore, password } from '../lib/store.js';

type Body = () => Record<string, string>;

/**
 * The password grant (right passwords, every request from 127.0.0.1) at 10 and 50 connections against the KDF's own
 * rate on the same core, with the 429s it answered; then the p99 of authenticated GETs alone and while a
 * 50-connection password-grant storm runs. Every password run has a freshly started server, so a lockout one run
 * provokes never carries into the next.
 */
export async function passwordBenchmark({ config, quick, work }: Run): Promise<void> {
  // scrypt allows tens of checks per second on one core: a 1-second run at 50 connections would end before its first
  // answers, so the quick bench runs these for 3 seconds too.
  const seconds = Math.max(config.seconds, 3);
  const store = await generateStore(join(work, 'password.json'), { users: 1_000 });
  const nextUser = roundRobin(store.usernames);
  const body = () => ({ grant_type: 'password', username: nextUser(), password });
  const fresh = freshServers(work, store, body);
  const runs = new Map<string, LoadFigures[]>();
  const ratios = new Map<string, number[]>();
  const add = (name: string, value: number) => append(ratios, name, value);
  const keep = (id: string, result: LoadFigures) => append(runs, id, result);
  const refusals = new Map<string, number>();
  const refused = (id: string, result: LoadFigures) => refusals.set(id, (refusals.get(id) ?? 0) + (result.statuses['429'] ?? 0));
  const kdf = new Map<string, number[]>();
  let quietServer: Target | undefined;
  let stormSeconds = seconds;
  for (let round = 0; round < config.rounds; round++) {
    for (const c of tokenConnectionCounts) {
      log(`password round ${round + 1}/${config.rounds}: KDF alone and password grant, ${c} connections`);
      const { rate } = runOnServerCore<{ rate: number }>('kdf', [String(c), String(seconds)]);
      append(kdf, `token.kdf.c${c}`, rate);
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
      refused(`token.password.c${c}.status_429`, result);
      add(`ratio.password_vs_kdf.c${c}`, result.rps / rate);
    }
    log(`password round ${round + 1}/${config.rounds}: GETs alone, then during a password-grant storm`);
    const { quiet, busy, storm } = await passwordStorm(config, quietServer!, bearer(store.accessTokens[0]!), body, seconds, stormSeconds);
    keep('token.get_quiet.c10', quiet);
    keep('token.get_during_password_storm.c10', busy);
    keep('token.password_storm.c50', storm);
    refused('token.password_storm.c50.status_429', storm);
    add('ratio.get_p99_storm_vs_quiet', busy.p99 / Math.max(quiet.p99, 1));
  }
  for (const [id, list] of runs) summarise(id, list);
  for (const [id, list] of kdf) record(`${id}.rps`, median(list));
  for (const [id, n] of refusals) record(id, n);
  for (const [name, list] of ratios) recordMedian(name, list);
}

/** Starts a password server on its own copy of the store, its token endpoint's checks already compiled. */
function freshServers(work: string, store: GeneratedStore, body: Body): () => Promise<Target> {
  let copies = 0;
  return async () => {
    // Its own copy of the store: the server that took 10 connections is still running during the 50-connection run.
    const file = join(work, `password-${copies++}.json`);
    await copyFile(store.file, file);
    const target = await startServer('password server', file);
    await waitFor200(target, readPath, bearer(store.accessTokens[0]!), 60_000);
    // One request compiles the validator's checks for the token endpoint before the clock starts.
    await fetch(`${target.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body()).toString() }).then((r) => r.text());
    return target;
  };
}

/** GETs at 10 connections alone, then beside a 50-connection password-grant storm on the same server, which it stops. */
async function passwordStorm(config: Config, target: Target, headers: Record<string, string>, body: Body, seconds: number, stormSeconds: number) {
  await load({ url: `${target.url}${readPath}`, connections: 10, duration: config.warmupSeconds, headers });
  const quiet = await load({ url: `${target.url}${readPath}`, connections: 10, duration: seconds, headers });
  const [busy, storm] = await Promise.all([
    load({ url: `${target.url}${readPath}`, connections: 10, duration: stormSeconds, headers }),
    load({ url: target.url, connections: 50, duration: stormSeconds, requests: formPost('/oauth/token', body) }),
  ]);
  await target.stop();
  return { quiet, busy, storm };
}
