// Notification mail end to end: the real server process (from source), a real SMTP server on loopback, and the
// `tokenbell events` CLI talking to the server over HTTP.
//   1. A newcomer's walkthrough, as docs/running.md (Notification mail) shows it: a user switches failed_pipeline on in a custom setting, an
//      administrator records a failed pipeline with the CLI, and exactly one message arrives, with the service's
//      headers; a passed pipeline mails nobody.
//   2. SIGKILL rounds under load, on PostgreSQL and on the JSON file store: bursts of concurrent event emissions, the
//      server killed within each burst and restarted on the same data; in the end every acknowledged event's mail
//      has reached the SMTP server (zero losses), and a duplicate only ever comes from a send a kill interrupted
//      (mail-delivery.ts: a worker killed between sending and recording leaves its claim to run out after 60 s).
//      The figures go to the log and to os.tmpdir()/tokenbell-mail-fault-rounds-<store>.json.
import { execFile } from 'node:child_process';
import http from 'node:http';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { cliPath, freePort, repoRoot, runCli, stopCli, tempDir, type CliProcess } from '../../packages/server/test/hardening/support.js';
import { defaultLeaseSeconds } from '../../packages/server/src/domain/mail-delivery.js';
import { freshMigratedDatabase } from '../support/postgres.js';
import { startInProcessSmtpServer, type InProcessSmtpServer } from '../support/smtp-in-process.js';
import { startSmtpServer, type ReceivedMessage, type TestSmtpServer } from '../support/smtp.js';
import { seededRandom } from '../support/random.js';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const rootPat = 'tbpat-root-mail-walkthrough-token-00000000000';
const alicePat = 'tbpat-alice-mail-walkthrough-token-0000000000';

/** An administrator (root), and alice and bob, developers of the private group acme, which has acme/widgets. */
const seed = {
  users: [
    { username: 'root', email: 'root@example.com', name: 'Administrator', password: 'administrator-password', is_admin: true, personal_access_tokens: [{ name: 'tests', token: rootPat, scopes: ['api'] }] },
    { username: 'alice', email: 'alice@example.com', name: 'Alice', password: 'alice-password', personal_access_tokens: [{ name: 'laptop', token: alicePat, scopes: ['api'] }] },
    { username: 'bob', email: 'bob@example.com', name: 'Bob', password: 'bob-password-1' },
  ],
  groups: [{ path: 'acme', name: 'Acme', visibility: 'private', members: [{ username: 'alice', access_level: 30 }, { username: 'bob', access_level: 30 }] }],
  projects: [{ namespace: 'acme', path: 'widgets', name: 'Widgets', visibility: 'private' }],
};

/**
 * What one test started: server processes and SMTP servers, stopped (SIGKILL: nothing to wait for) when the test
 * finishes, whatever happened, then the test's clean-ups (a data directory, a database) in reverse order. One per
 * test, so that the two stores' rounds can run at the same time.
 */
class Started {
  private readonly servers = new Set<CliProcess>();
  private readonly smtpServers = new Set<{ close(): Promise<void> }>();
  private readonly cleanups: Array<() => Promise<void>> = [];

  constructor(onTestFinished: (fn: () => Promise<void>) => void) {
    onTestFinished(() => this.finish());
  }

  cleanup(fn: () => Promise<void>): void {
    this.cleanups.push(fn);
  }

  async smtpServer(): Promise<TestSmtpServer> {
    const smtp = await startSmtpServer();
    this.smtpServers.add(smtp);
    return smtp;
  }

  async inProcessSmtpServer(): Promise<InProcessSmtpServer> {
    const smtp = await startInProcessSmtpServer();
    this.smtpServers.add(smtp);
    return smtp;
  }

  async tempDir(): Promise<string> {
    const dir = await tempDir();
    this.cleanup(dir.remove);
    return dir.path;
  }

  /** The server from source on `port` (the same one across restarts), once it says it is listening. */
  async serve(args: string[], port: number, timeoutMs = 30_000): Promise<CliProcess> {
    const cli = runCli(['--log-level', 'warn', ...args], port);
    this.servers.add(cli);
    const deadline = Date.now() + timeoutMs;
    while (!cli.output().includes('tokenbell listening on')) {
      const ended = await Promise.race([cli.exited, sleep(20).then(() => null)]);
      if (ended) throw new Error(`tokenbell exited (${ended.code ?? ended.signal}) before listening:\n${cli.output()}`);
      if (Date.now() > deadline) {
        cli.child.kill('SIGKILL');
        throw new Error(`tokenbell did not start within ${timeoutMs} ms:\n${cli.output()}`);
      }
    }
    return cli;
  }

  /** SIGKILL, as a crash would; answers once the process is gone. */
  async kill(cli: CliProcess): Promise<void> {
    cli.child.kill('SIGKILL');
    await cli.exited;
    this.servers.delete(cli);
  }

  /** SIGTERM, the clean stop (the worker finishes its round); answers the exit code. */
  async stop(cli: CliProcess): Promise<number | null> {
    await stopCli(cli);
    this.servers.delete(cli);
    return cli.child.exitCode;
  }

  private async finish(): Promise<void> {
    await Promise.all([...this.servers].map((cli) => stopCli(cli, 'SIGKILL')));
    await Promise.all([...this.smtpServers].map((smtp) => smtp.close()));
    for (const cleanup of this.cleanups.splice(0).reverse()) await cleanup();
  }
}

/** `tokenbell events ...` as a child process; its stdout (a non-zero exit rejects with its output). */
async function eventsCli(args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [cliPath, 'events', ...args], { cwd: repoRoot, timeout: 30_000 });
  return stdout;
}

interface ListedMessage {
  id: string;
  event_id: string;
  username: string;
  to: string;
  subject: string;
  reason: string;
  status: 'queued' | 'sent' | 'failed';
  attempts: number;
  last_error: string | null;
}

async function listMessages(baseUrl: string, query: Record<string, string>): Promise<ListedMessage[]> {
  const response = await fetch(`${baseUrl}/api/v3/test_helpers/notification_messages?${new URLSearchParams(query)}`, { headers: { 'PRIVATE-TOKEN': rootPat } });
  expect(response.status).toBe(200);
  return (await response.json()) as ListedMessage[];
}

/** Asks `check` every 100 ms until it answers something other than undefined; throws after `timeoutMs`. */
async function eventually<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await check();
    if (answer !== undefined) return answer;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

/** The event id in a Message-ID of notification-mail.ts: <EVENT_ID.MESSAGE_ID@HOST>. */
const eventIdOf = (messageId: string) => /^<([^.@]+)\.[^.@]+@[^>]+>$/.exec(messageId)?.[1];

describe("a newcomer's walkthrough", () => {
  it('a failed pipeline mails alice, who switched it on in a custom setting, and nobody else; a passed one mails nobody', async ({ onTestFinished }) => {
    const started = new Started(onTestFinished);
    const smtp = await started.smtpServer();
    const dir = await started.tempDir();
    const seedFile = join(dir, 'seed.json');
    await writeFile(seedFile, JSON.stringify(seed));
    const port = await freePort();
    const server = await started.serve(['--data', join(dir, 'tokenbell.json'), '--seed', seedFile, '--test-helpers', '--smtp-url', smtp.url], port);
    const url = server.baseUrl;

    // alice: custom on acme/widgets, with failed_pipeline on.
    const settings = await fetch(`${url}/api/v3/projects/acme%2Fwidgets/notification_settings?level=custom&failed_pipeline=true`, { method: 'PUT', headers: { 'PRIVATE-TOKEN': alicePat } });
    expect(settings.status).toBe(200);
    expect(await settings.json()).toMatchObject({ level: 'custom', events: { failed_pipeline: true, success_pipeline: false } });

    const emitted = await eventsCli(['emit', '--url', url, '--token', rootPat, '--project', 'acme/widgets', '--kind', 'failed_pipeline', '--title', 'Pipeline #7 failed', '--author', 'bob', '--pipeline-user', 'alice']);
    const [headline, ...mailed] = emitted.trimEnd().split('\n');
    expect(headline).toMatch(/^recorded failed_pipeline event (\S+) on project \d+; mailing:$/);
    const eventId = /event (\S+) on/.exec(headline!)![1]!;
    expect(mailed).toEqual(['  alice <alice@example.com> (custom)']);

    const [mail] = await eventually('the pipeline mail at the SMTP server', 15_000, () => {
      const received = smtp.received();
      return received.length > 0 ? received : undefined;
    });
    expect(mail!.to).toEqual(['alice@example.com']);
    expect(mail!.headers.subject).toContain('acme/widgets');
    expect(mail!.headers.subject).toContain('Pipeline #7 failed');
    expect(mail!.headers['x-gitlab-notificationreason']).toBe('custom');
    expect(mail!.headers['x-gitlab-project']).toBe('acme/widgets');
    expect(mail!.headers['list-id']).toMatch(/^acme\/widgets <\d+\.acme\.widgets\.127\.0\.0\.1>$/);
    expect(eventIdOf(mail!.headers['message-id']!)).toBe(eventId);
    expect(mail!.headers.from).toContain('notifications@127.0.0.1');
    expect(mail!.body).toContain('Pipeline #7 failed');

    // The worker records the send after the SMTP server accepted it.
    await eventually('the message recorded as sent', 10_000, async () => {
      const [listed] = await listMessages(url, { event_id: eventId });
      return listed?.status === 'sent' ? listed : undefined;
    });
    const listing = await eventsCli(['messages', '--url', url, '--token', rootPat, '--username', 'alice']);
    const lines = listing.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/\d{4}-\d\d-\d\dT\S+  sent +alice@example\.com {2}acme\/widgets \| Pipeline #7 failed/);

    // A passed pipeline: alice has only failed_pipeline on, so nobody is mailed and nothing is queued.
    const passed = await eventsCli(['emit', '--url', url, '--token', rootPat, '--project', 'acme/widgets', '--kind', 'success_pipeline', '--title', 'Pipeline #8 passed', '--author', 'bob', '--pipeline-user', 'alice']);
    expect(passed.trimEnd().split('\n')).toEqual([expect.stringMatching(/^recorded success_pipeline event (\S+) on project \d+; nobody is mailed$/)]);
    const passedId = /event (\S+) on/.exec(passed)![1]!;
    expect(await listMessages(url, { event_id: passedId })).toEqual([]);
    // Longer than a poll of the delivery worker (1 s): still the one message, to alice only.
    await sleep(1_500);
    expect(smtp.received().map((m) => [m.to, m.headers['message-id']])).toEqual([[['alice@example.com'], mail!.headers['message-id']]]);
    expect((await listMessages(url, {})).map((m) => m.event_id)).toEqual([eventId]);

    expect(await started.stop(server)).toBe(0);
  }, 60_000);
});

type Outcome =
  | { kind: 'acknowledged'; eventId: string }
  /** The connection broke after the request was sent: the kill fell while it was in flight. */
  | { kind: 'interrupted'; error: string }
  /** Nobody listened any more: the request never reached a server. */
  | { kind: 'refused' }
  | { kind: 'unexpected'; status: number; body: string };

/**
 * One emission over its own connection (no keep-alive, so a socket left from a killed server is never reused and
 * every broken connection is a request that really was in flight).
 */
function emit(port: number, title: string, onAcknowledged: () => void): Promise<Outcome> {
  const body = JSON.stringify({ kind: 'new_issue', title, author: 'bob' });
  return new Promise((resolve) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/v3/test_helpers/projects/acme%2Fwidgets/notification_events',
        headers: { 'PRIVATE-TOKEN': rootPat, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (error) => resolve({ kind: 'interrupted', error: error.message }));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (response.statusCode !== 201) return resolve({ kind: 'unexpected', status: response.statusCode!, body: text });
          onAcknowledged();
          resolve({ kind: 'acknowledged', eventId: (JSON.parse(text) as { id: string }).id });
        });
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED' ? { kind: 'refused' } : { kind: 'interrupted', error: error.code ?? error.message }));
    request.end(body);
  });
}

const rounds = 5;
const burst = 20;
// 5 x 20 events at most: the whole outbox fits in one page of the listing (per_page at most 100).
const deliveryWaitMs = 90_000;

async function sigkillRounds(started: Started, store: 'postgres' | 'file', storeArgs: string[]) {
  const seedValue = Number(process.env.TOKENBELL_MAIL_CRASH_SEED ?? Date.now() % 1_000_000);
  // The two stores draw different moments from one printed seed.
  const rand = seededRandom(store === 'file' ? seedValue ^ 0x5f3759df : seedValue);
  // In this process: a kill mid-send resets the connection, which would end the child-process server of smtp.ts.
  const smtp = await started.inProcessSmtpServer();
  const seedFile = join(await started.tempDir(), 'seed.json');
  await writeFile(seedFile, JSON.stringify(seed));
  const port = await freePort();
  const args = [...storeArgs, '--test-helpers', '--smtp-url', smtp.url];
  let server = await started.serve([...args, '--seed', seedFile], port);
  // alice watches acme/widgets: each new issue bob opens mails her, and only her.
  const watch = await fetch(`${server.baseUrl}/api/v3/projects/acme%2Fwidgets/notification_settings?level=watch`, { method: 'PUT', headers: { 'PRIVATE-TOKEN': alicePat } });
  expect(watch.status).toBe(200);

  const attempts: Array<{ title: string; outcome: Outcome }> = [];
  const roundFigures: Array<{ attempted: number; acknowledged: number; interrupted: number; refused: number; killedAfterAcks: number }> = [];
  for (let round = 0; round < rounds; round++) {
    // The kill falls within the burst: once `killAfter` of its emissions have been acknowledged (1 to burst-5, at
    // random), so the rest are in flight, or already committed and answered but not yet read. Fewer than burst-1,
    // since the file store often answers the last few together.
    const killAfter = 1 + Math.floor(rand() * (burst - 5));
    let acknowledged = 0;
    const victim = server;
    let killing: Promise<void> | undefined;
    const onAcknowledged = () => {
      if (++acknowledged === killAfter) killing = started.kill(victim);
    };
    const titles = Array.from({ length: burst }, (_, i) => `${store} round ${round + 1} issue ${i + 1}`);
    const outcomes = await Promise.all(titles.map((title) => emit(port, title, onAcknowledged)));
    await killing;
    titles.forEach((title, i) => attempts.push({ title, outcome: outcomes[i]! }));
    const count = (kind: Outcome['kind']) => outcomes.filter((o) => o.kind === kind).length;
    roundFigures.push({ attempted: burst, acknowledged: count('acknowledged'), interrupted: count('interrupted'), refused: count('refused'), killedAfterAcks: killAfter });
    expect(outcomes.filter((o) => o.kind === 'unexpected')).toEqual([]);
    expect(victim.child.signalCode).toBe('SIGKILL');
    server = await started.serve(args, port);
  }

  const acknowledged = new Map(attempts.flatMap((a) => (a.outcome.kind === 'acknowledged' ? [[a.outcome.eventId, a.title] as const] : [])));
  const interruptedTitles = new Set(attempts.filter((a) => a.outcome.kind === 'interrupted').map((a) => a.title));
  const byMessageId = (received: ReceivedMessage[]) => {
    const counts = new Map<string, number>();
    for (const m of received) counts.set(m.headers['message-id']!, (counts.get(m.headers['message-id']!) ?? 0) + 1);
    return counts;
  };

  // Every acknowledged event's mail at the SMTP server, and every message the outbox holds recorded as sent; a send
  // a kill interrupted is retried only once its 60 s claim has run out, on the instance's clock (the test kit's, with
  // --test-helpers), which is moved past it rather than waited for.
  const moved = await fetch(`${server.baseUrl}/api/v3/test_helpers/clock`, {
    method: 'POST',
    headers: { 'PRIVATE-TOKEN': rootPat, 'Content-Type': 'application/json' },
    body: JSON.stringify({ seconds: defaultLeaseSeconds + 1 }),
  });
  expect(moved.status).toBe(200);
  const waitStarted = Date.now();
  let listed: ListedMessage[] = [];
  let received: ReceivedMessage[] = [];
  let settled = true;
  try {
    await eventually('every acknowledged event mailed and every message sent', deliveryWaitMs, async () => {
      received = smtp.received();
      const deliveredEvents = new Set([...byMessageId(received).keys()].map(eventIdOf));
      if ([...acknowledged.keys()].some((id) => !deliveredEvents.has(id))) return undefined;
      listed = await listMessages(server.baseUrl, { per_page: '100' });
      return listed.every((m) => m.status === 'sent') ? true : undefined;
    });
  } catch {
    // Measured below all the same: the assertions name what is missing.
    settled = false;
    listed = await listMessages(server.baseUrl, { per_page: '100' });
    received = smtp.received();
  }
  const waitedMs = Date.now() - waitStarted;

  const counts = byMessageId(received);
  const deliveredEvents = new Set([...counts.keys()].map(eventIdOf));
  const recordedEvents = new Map(listed.map((m) => [m.event_id, m]));
  const lost = [...acknowledged].filter(([id]) => !deliveredEvents.has(id)).map(([id, title]) => `${id} (${title})`);
  const duplicated = [...counts].filter(([, n]) => n > 1);
  const recordedNotAcknowledged = [...recordedEvents.values()].filter((m) => !acknowledged.has(m.event_id));
  const kills = rounds;
  const figures = {
    store,
    seed: seedValue,
    rounds,
    kills,
    events_attempted: attempts.length,
    acknowledged: acknowledged.size,
    interrupted: interruptedTitles.size,
    refused: attempts.filter((a) => a.outcome.kind === 'refused').length,
    recorded: recordedEvents.size,
    recorded_not_acknowledged: recordedNotAcknowledged.length,
    messages_received: received.length,
    delivered: deliveredEvents.size,
    duplicates: duplicated.length,
    losses: lost.length,
    not_sent: listed.filter((m) => m.status !== 'sent').length,
    smtp_transactions_reset: smtp.resets(),
    waited_for_delivery_ms: waitedMs,
    per_round: roundFigures,
  };
  console.log(`mail SIGKILL rounds (${store}): ${JSON.stringify(figures)}`);
  await writeFile(join(tmpdir(), `tokenbell-mail-fault-rounds-${store}.json`), `${JSON.stringify(figures, null, 2)}\n`);

  // Not vacuous: kills interrupted requests in flight, and events were acknowledged.
  expect(interruptedTitles.size).toBeGreaterThan(0);
  expect(acknowledged.size).toBeGreaterThan(0);
  expect(roundFigures.every((r) => r.acknowledged >= r.killedAfterAcks)).toBe(true);
  // The listing held the whole outbox (one message per event, fewer than a page can hold).
  expect(attempts.length).toBeLessThanOrEqual(100);
  expect(listed.every((m) => m.username === 'alice' && m.reason === 'watching')).toBe(true);
  expect(new Set(listed.map((m) => m.event_id)).size).toBe(listed.length);

  // Zero losses: every acknowledged event was recorded and its mail delivered.
  expect(lost).toEqual([]);
  expect([...acknowledged.keys()].filter((id) => !recordedEvents.has(id))).toEqual([]);
  // An event recorded without its answer is one whose request a kill interrupted (it committed, then the process
  // died before answering); it is delivered like any other.
  expect(recordedNotAcknowledged.filter((m) => !interruptedTitles.has(m.subject.replace(/^acme\/widgets \| (.*) \(new_issue\)$/, '$1')))).toEqual([]);
  expect([...recordedEvents.keys()].filter((id) => !deliveredEvents.has(id))).toEqual([]);
  expect(listed.filter((m) => m.status !== 'sent')).toEqual([]);
  expect(settled).toBe(true);
  // Nothing but these events' mail, to alice only; a duplicate is a message of a recorded event, sent again once
  // the claim a kill interrupted ran out (at most once per kill it lived through).
  expect(received.filter((m) => m.to.length !== 1 || m.to[0] !== 'alice@example.com')).toEqual([]);
  expect([...counts.keys()].filter((id) => !recordedEvents.has(eventIdOf(id) ?? ''))).toEqual([]);
  expect(duplicated.filter(([, n]) => n > kills + 1)).toEqual([]);
  expect(figures.losses).toBe(0);

  await started.stop(server);
}

// The two stores at the same time: most of each run is the wait for claims a kill left to run out (60 s).
describe.concurrent('SIGKILL rounds under load', () => {
  it('on PostgreSQL: no acknowledged event loses its mail', async ({ onTestFinished }) => {
    const started = new Started(onTestFinished);
    const database = await freshMigratedDatabase(inject('postgresUrl'));
    started.cleanup(() => database.drop());
    await sigkillRounds(started, 'postgres', ['--database-url', database.url]);
  }, 180_000);

  it('on the JSON file store: no acknowledged event loses its mail', async ({ onTestFinished }) => {
    const started = new Started(onTestFinished);
    await sigkillRounds(started, 'file', ['--data', join(await started.tempDir(), 'tokenbell.json')]);
  }, 180_000);
});
