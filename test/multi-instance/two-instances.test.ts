// Two tokenbell processes on one PostgreSQL database behind a round-robin proxy on loopback, as behind a load
// balancer: every request may land on either instance, so each race below is a race between two processes. Over
// many rounds: a code is redeemed at most once and a replay ends its chain; of concurrent refreshes of one token at
// most one wins and the chain then ends; rotation racing a replay, and the user revoking the application racing a
// refresh, leave nothing alive; 1,000 PUTs from 100 users end on each user's last acknowledged write; 11 wrong
// passwords spread over both meet the limit of 10; a user signs in on one instance and consents on the other; and
// SIGKILL of one instance under load loses no acknowledged write.
import { readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Agent, approveAuthorization, csrfOf } from '../../packages/server/test/support/agent.js';
import { exampleAccounts, exampleApplication } from '../../packages/server/test/support/example-seed.js';
import { exampleSeed, startCli, stopCli, tempDir, type CliProcess } from '../../packages/server/test/hardening/support.js';
import { freshMigratedDatabase } from '../support/postgres.js';

const rounds = 12;
const racers = 10;
const loadUsers = 100;
const putsPerUser = 10;

/** A round-robin HTTP proxy that names the instance that answered (`x-served-by`) and skips one it found dead. */
async function roundRobinProxy() {
  const targets: Array<{ port: number; down: boolean }> = [];
  let next = 0;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const server = http.createServer((req, res) => {
    const alive = targets.map((t, i) => ({ ...t, i })).filter((t) => !t.down);
    if (alive.length === 0) return void res.writeHead(502).end();
    const target = alive[next++ % alive.length]!;
    const upstream = http.request({ host: '127.0.0.1', port: target.port, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
      res.writeHead(answer.statusCode!, { ...answer.headers, 'x-served-by': String(target.i) });
      answer.pipe(res);
    });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') targets[target.i]!.down = true;
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    add: (port: number) => targets.push({ port, down: false }),
    close: async () => {
      server.closeAllConnections();
      agent.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

let database: { url: string; drop(): Promise<void> };
let proxy: Awaited<ReturnType<typeof roundRobinProxy>>;
const instances: CliProcess[] = [];
let dir: Awaited<ReturnType<typeof tempDir>>;
let browser: Agent;
const figures: Record<string, unknown> = {};

const loadToken = (i: number) => `tbpat-load-${String(i).padStart(3, '0')}-000000000000000000000000`;
/** The SIGKILL test's writes cycle through this many addresses of each writer's: its answers name the write stored among so many. */
const killAddresses = 16;
/** The addresses the load's PUTs name, each user's own (a notification e-mail must be one of the user's addresses). */
const putEmail = (i: number, n: number) => `load${i}-${n}@example.com`;
const killEmail = (i: number, n: number) => `kill${i}-${n % killAddresses}@example.com`;

beforeAll(async () => {
  database = await freshMigratedDatabase(inject('postgresUrl'));
  dir = await tempDir();
  // The example fixture plus the users of the write load, each with a personal access token.
  const fixture = JSON.parse(await readFile(exampleSeed, 'utf8')) as { users: unknown[] };
  for (let i = 0; i < loadUsers; i++) {
    const secondary_emails = [...Array.from({ length: putsPerUser }, (_, n) => putEmail(i, n)), ...Array.from({ length: killAddresses }, (_, n) => killEmail(i, n))];
    fixture.users.push({ username: `load${i}`, email: `load${i}@example.com`, secondary_emails, name: `Load ${i}`, password: `load-password-${i}`, personal_access_tokens: [{ name: 'load', token: loadToken(i) }] });
  }
  const seedFile = `${dir.path}/seed.json`;
  await writeFile(seedFile, JSON.stringify(fixture));
  proxy = await roundRobinProxy();
  const common = ['--database-url', database.url, '--base-url', proxy.url, '--log-level', 'warn'];
  // The first seeds the shared database; the second finds it seeded.
  instances.push(await startCli([...common, '--seed', seedFile], 60_000));
  instances.push(await startCli(common, 60_000));
  for (const instance of instances) proxy.add(instance.port);
  browser = new Agent(proxy.url);
}, 120_000);

afterAll(async () => {
  for (const instance of instances) await stopCli(instance);
  await proxy?.close();
  await database?.drop();
  await dir?.remove();
  console.log(`two instances, one database: ${JSON.stringify(figures)}`);
});

const form = (params: Record<string, string>): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(params).toString(),
});
const client = { client_id: exampleApplication.clientId, client_secret: exampleApplication.clientSecret };
const token = (params: Record<string, string>) => fetch(`${proxy.url}/oauth/token`, form({ ...params, ...client }));
const servedBy = (response: Response) => response.headers.get('x-served-by');

/** Whether an access token still opens the API. */
async function alive(accessToken: string): Promise<boolean> {
  const response = await fetch(`${proxy.url}/api/v3/user`, { headers: { authorization: `Bearer ${accessToken}` } });
  await response.arrayBuffer();
  return response.status === 200;
}

const authorizationUrl = `/oauth/authorize?${new URLSearchParams({ client_id: exampleApplication.clientId, redirect_uri: exampleApplication.redirectUri, response_type: 'code', scope: 'api', state: 'round' })}`;

/** A fresh code for jsmith, through the consent page, in the browser's session. */
async function newCode(): Promise<string> {
  const approval = await approveAuthorization(browser, authorizationUrl);
  expect(approval.status).toBe(302);
  return new URL(approval.headers.get('location')!).searchParams.get('code')!;
}

interface Tokens {
  access_token: string;
  refresh_token: string;
}

async function exchange(code: string): Promise<Tokens> {
  const response = await token({ grant_type: 'authorization_code', code, redirect_uri: exampleApplication.redirectUri });
  expect(response.status).toBe(200);
  return (await response.json()) as Tokens;
}

/** Several requests at once; each answer's status and body. */
async function race(requests: Array<() => Promise<Response>>): Promise<Array<{ status: number; body: Partial<Tokens> & { error?: string }; servedBy: string | null }>> {
  return Promise.all(
    requests.map(async (send) => {
      const response = await send();
      return { status: response.status, body: (await response.json()) as Partial<Tokens>, servedBy: servedBy(response) };
    }),
  );
}

describe('two instances on one database', () => {
  it('signs in on one instance and consents on the other', async () => {
    const page = await browser.get('/users/sign_in');
    const signedIn = await browser.post('/users/sign_in', { _csrf: csrfOf(await page.text()), login: exampleAccounts.jsmith.username, password: exampleAccounts.jsmith.password });
    expect(signedIn.status).toBe(302);
    const consent = await browser.get(authorizationUrl);
    expect(consent.status).toBe(200);
    expect(await consent.text()).toContain('Example App');
    expect(servedBy(consent)).not.toBe(servedBy(signedIn));
    // And the code the consent issues is redeemed on either.
    const tokens = await exchange(await newCode());
    expect(await alive(tokens.access_token)).toBe(true);
  });

  it(`redeems each code at most once, ${rounds} rounds of ${racers} exchanges spread over both, and a replay ends the chain`, async () => {
    let issued = 0;
    const instancesUsed = new Set<string | null>();
    for (let round = 0; round < rounds; round++) {
      const code = await newCode();
      const answers = await race(Array.from({ length: racers }, () => () => token({ grant_type: 'authorization_code', code, redirect_uri: exampleApplication.redirectUri })));
      answers.forEach((a) => instancesUsed.add(a.servedBy));
      const winners = answers.filter((a) => a.status === 200);
      expect(winners).toHaveLength(1);
      expect(answers.filter((a) => a.status !== 200).every((a) => a.status === 400 && a.body.error === 'invalid_grant')).toBe(true);
      issued += winners.length;
      // The losers were replays of a used code: the winner's tokens are revoked.
      expect(await alive(winners[0]!.body.access_token!)).toBe(false);
    }
    expect(instancesUsed).toEqual(new Set(['0', '1']));
    figures.codeRaces = { rounds, racers, tokensIssued: issued, doubleSpends: issued - rounds };
  });

  it(`lets at most one of ${racers} concurrent refreshes of one token win, and the replays end the chain`, async () => {
    let winnersTotal = 0;
    for (let round = 0; round < rounds; round++) {
      const first = await exchange(await newCode());
      const answers = await race(Array.from({ length: racers }, () => () => token({ grant_type: 'refresh_token', refresh_token: first.refresh_token })));
      const winners = answers.filter((a) => a.status === 200);
      expect(winners.length).toBeLessThanOrEqual(1);
      winnersTotal += winners.length;
      for (const tokens of [first, ...winners.map((w) => w.body as Tokens)]) expect(await alive(tokens.access_token)).toBe(false);
    }
    figures.refreshRaces = { rounds, racers, winners: winnersTotal, alive: 0 };
  });

  it('leaves nothing alive when a rotation races a replay of the token it replaced', async () => {
    for (let round = 0; round < rounds; round++) {
      const first = await exchange(await newCode());
      const rotated = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token });
      expect(rotated.status).toBe(200);
      const second = (await rotated.json()) as Tokens;
      const answers = await race([
        () => token({ grant_type: 'refresh_token', refresh_token: second.refresh_token }),
        () => token({ grant_type: 'refresh_token', refresh_token: first.refresh_token }),
      ]);
      expect(answers[1]!.status).toBe(400);
      const everyAccessToken = [first, second, ...answers.filter((a) => a.status === 200).map((a) => a.body as Tokens)].map((t) => t.access_token);
      for (const accessToken of everyAccessToken) expect(await alive(accessToken)).toBe(false);
    }
    figures.rotationAgainstReplay = { rounds, alive: 0 };
  });

  it('leaves nothing alive when the user revokes the application while a refresh is under way', async () => {
    let refreshWon = 0;
    for (let round = 0; round < rounds; round++) {
      const first = await exchange(await newCode());
      const page = await (await browser.get('/profile/applications')).text();
      const action = /action="(\/profile\/authorized_applications\/\d+\/revoke)"/.exec(page)![1]!;
      const [revoked, refreshed] = await Promise.all([browser.post(action, { _csrf: csrfOf(page) }), token({ grant_type: 'refresh_token', refresh_token: first.refresh_token })]);
      expect(revoked.status).toBe(302);
      const tokens = [first];
      if (refreshed.status === 200) {
        refreshWon += 1;
        tokens.push((await refreshed.json()) as Tokens);
      }
      for (const t of tokens) {
        expect(await alive(t.access_token)).toBe(false);
        expect((await token({ grant_type: 'refresh_token', refresh_token: t.refresh_token })).status).toBe(400);
      }
    }
    figures.revocationAgainstRefresh = { rounds, refreshWonTheRace: refreshWon, alive: 0 };
  });

  it(`ends ${loadUsers * putsPerUser} PUTs from ${loadUsers} users on each user's last acknowledged write`, async () => {
    const last = new Map<number, unknown>();
    const servedCount = new Map<string | null, number>();
    await Promise.all(
      Array.from({ length: loadUsers }, async (_, i) => {
        for (let n = 0; n < putsPerUser; n++) {
          const response = await fetch(`${proxy.url}/api/v3/notification_settings`, {
            method: 'PUT',
            headers: { 'private-token': loadToken(i), 'content-type': 'application/json' },
            body: JSON.stringify({ level: n % 2 === 0 ? 'watch' : 'participating', notification_email: putEmail(i, n) }),
          });
          expect(response.status).toBe(200);
          servedCount.set(servedBy(response), (servedCount.get(servedBy(response)) ?? 0) + 1);
          last.set(i, await response.json());
        }
      }),
    );
    for (let i = 0; i < loadUsers; i++) {
      const response = await fetch(`${proxy.url}/api/v3/notification_settings`, { headers: { 'private-token': loadToken(i) } });
      expect(await response.json()).toEqual(last.get(i));
      expect(last.get(i)).toMatchObject({ notification_email: putEmail(i, putsPerUser - 1) });
    }
    figures.puts = { users: loadUsers, puts: loadUsers * putsPerUser, byInstance: Object.fromEntries(servedCount), lost: 0 };
  });

  it('counts 11 wrong passwords spread over both instances against one limit of 10', async () => {
    const answers = [];
    for (let attempt = 0; attempt < 11; attempt++) {
      const response = await token({ grant_type: 'password', username: exampleAccounts.mallory.username, password: `wrong-${attempt}` });
      answers.push({ status: response.status, servedBy: servedBy(response) });
      await response.arrayBuffer();
    }
    expect(answers.map((a) => a.status)).toEqual([...Array<number>(10).fill(400), 429]);
    expect(new Set(answers.map((a) => a.servedBy))).toEqual(new Set(['0', '1']));
  });

  it('loses no acknowledged write when one instance is killed (SIGKILL) under load', async () => {
    const writers = 40;
    const acknowledged = new Map<number, number>();
    const attempted = new Map<number, number>();
    let stop = false;
    let failures = 0;
    const load = Promise.all(
      Array.from({ length: writers }, async (_, i) => {
        for (let n = 0; !stop; n++) {
          attempted.set(i, n);
          const response = await fetch(`${proxy.url}/api/v3/notification_settings`, {
            method: 'PUT',
            headers: { 'private-token': loadToken(i), 'content-type': 'application/json' },
            body: JSON.stringify({ notification_email: killEmail(i, n) }),
          }).catch(() => null);
          if (response?.status === 200) acknowledged.set(i, n);
          else failures += 1;
          await response?.arrayBuffer().catch(() => undefined);
        }
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await stopCli(instances[1]!, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    stop = true;
    await load;
    let acknowledgedWrites = 0;
    for (let i = 0; i < writers; i++) {
      const response = await fetch(`${proxy.url}/api/v3/notification_settings`, { headers: { 'private-token': loadToken(i) } });
      expect(response.headers.get('x-served-by')).toBe('0');
      const { notification_email } = (await response.json()) as { notification_email: string };
      // The last acknowledged write, or one after it whose answer the kill cut off: fewer than killAddresses writes,
      // so the address tells which.
      expect(attempted.get(i)! - acknowledged.get(i)!).toBeLessThan(killAddresses);
      const stored = Array.from({ length: attempted.get(i)! - acknowledged.get(i)! + 1 }, (_, k) => acknowledged.get(i)! + k).find((n) => killEmail(i, n) === notification_email);
      expect(stored, notification_email).toBeDefined();
      acknowledgedWrites += acknowledged.get(i)! + 1;
    }
    figures.sigkill = { writers, acknowledgedWrites, unacknowledged: failures, lostAcknowledged: 0 };
  });
});
