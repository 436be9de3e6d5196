// What /-/metrics tells an operator to alert on: the mail outbox (by status, the oldest queued message's age, delivery
// attempts by outcome, through a real SMTP server), the PostgreSQL pool, the build and whether test helpers are on;
// and the OpenMetrics format for whoever asks for it by Accept.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpServer, type TestSmtpServer } from '../../../../test/support/smtp.js';
import { smtpTransport } from '../../src/domain/mail-delivery.js';
import { json, startTestServer, type TestServer } from '../support/server.js';

const rootPat = 'tbpat-root-metrics-token-00000000000000000000';
const metricsSeed = {
  users: [
    { username: 'root', email: 'root@example.com', name: 'Administrator', password: 'administrator-password', is_admin: true, personal_access_tokens: [{ name: 'tests', token: rootPat, scopes: ['api'] }] },
    { username: 'jsmith', email: 'jsmith@example.com', name: 'Jane Smith', password: 'correct-horse-battery' },
    { username: 'awong', email: 'awong@example.com', name: 'Alex Wong', password: 'alex-wong-password' },
  ],
  groups: [{ path: 'acme', name: 'Acme', visibility: 'private', members: [{ username: 'jsmith', access_level: 50 }, { username: 'awong', access_level: 30 }] }],
  projects: [{ namespace: 'acme', path: 'widgets', name: 'Widgets', visibility: 'private' }],
};

let server: TestServer;
let smtp: TestSmtpServer;
beforeAll(async () => {
  smtp = await startSmtpServer();
  server = await startTestServer({ seed: metricsSeed, testHelpers: true, mailTransport: smtpTransport(smtp.url, 'tokenbell@example.com') });
});
afterAll(async () => {
  await server?.close();
  await smtp?.close();
});

const scrape = (on: TestServer, accept?: string) => fetch(`${on.baseUrl}/-/metrics`, accept === undefined ? {} : { headers: { accept } });
const text = async (on: TestServer = server) => (await scrape(on)).text();
/** The value of one sample of the exposition, null when absent. */
const sample = (exposition: string, series: string) => {
  const line = exposition.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? null : Number(line.slice(series.length + 1));
};

/** A failed pipeline: one mail, to jsmith, who ran it. */
const emitEvent = async (title: string) => {
  const response = await fetch(`${server.baseUrl}/api/v3/test_helpers/projects/acme%2Fwidgets/notification_events`, {
    ...json('POST', { kind: 'failed_pipeline', title, author: 'awong', pipeline_user: 'jsmith' }),
    headers: { 'content-type': 'application/json', 'private-token': rootPat },
  });
  const event = await response.json();
  expect(response.status, JSON.stringify(event)).toBe(201);
  expect(event.recipients).toHaveLength(1);
};

/** Scrapes until `done` holds of the metrics (the worker delivers in the background). */
async function scrapeUntil(what: string, done: (exposition: string) => boolean): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const exposition = await text();
    if (done(exposition)) return exposition;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${exposition.split('\n').filter((l) => l.startsWith('tokenbell_mail')).join('\n')}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const outbox = (exposition: string, status: string) => sample(exposition, `tokenbell_mail_outbox_messages{status="${status}"}`);
const attempts = (exposition: string, outcome: string) => sample(exposition, `tokenbell_mail_delivery_attempts_total{outcome="${outcome}"}`);
const oldestAge = (exposition: string) => sample(exposition, 'tokenbell_mail_outbox_oldest_queued_age_seconds');

describe('requests', () => {
  it('are counted by the method sent and the route, a HEAD and an API request refused before its checks included', async () => {
    const counted = (exposition: string, method: string, route: string, status: number) => sample(exposition, `tokenbell_http_requests_total{method="${method}",route="${route}",status="${status}"}`) ?? 0;
    const before = await text();
    expect((await fetch(`${server.baseUrl}/api/v4/projects/acme%2Fwidgets`)).status).toBe(401);
    expect((await fetch(`${server.baseUrl}/api/v3/user`, { method: 'HEAD' })).status).toBe(401);
    expect((await fetch(`${server.baseUrl}/.well-known/openid-configuration`, { method: 'HEAD' })).status).toBe(200);
    const after = await text();
    expect(counted(after, 'GET', '/api/v3/projects/:id', 401) - counted(before, 'GET', '/api/v3/projects/:id', 401)).toBe(1);
    expect(counted(after, 'HEAD', '/api/v3/user', 401) - counted(before, 'HEAD', '/api/v3/user', 401)).toBe(1);
    expect(counted(after, 'HEAD', '/.well-known/openid-configuration', 200) - counted(before, 'HEAD', '/.well-known/openid-configuration', 200)).toBe(1);
    expect(after).not.toMatch(/route="unmatched",status="401"/);
  });
});

describe('the mail outbox', () => {
  it('counts messages queued, sent and failed, the oldest queued one\'s age, and delivery attempts by outcome', async () => {
    const empty = await text();
    expect([outbox(empty, 'queued'), outbox(empty, 'sent'), outbox(empty, 'failed'), oldestAge(empty)]).toEqual([0, 0, 0, 0]);
    expect([attempts(empty, 'sent'), attempts(empty, 'retry'), attempts(empty, 'failed')]).toEqual([0, 0, 0]);

    // Refused for now: the message stays queued, retried, and grows old by the server's clock.
    await smtp.refuse('temporary');
    await emitEvent('Pipeline #1 failed');
    const refused = await scrapeUntil('a retry', (e) => (attempts(e, 'retry') ?? 0) >= 1);
    expect([outbox(refused, 'queued'), outbox(refused, 'sent'), attempts(refused, 'sent')]).toEqual([1, 0, 0]);
    server.advance(900);
    const waited = oldestAge(await text())!;
    expect(waited).toBeGreaterThanOrEqual(900);
    expect(waited).toBeLessThan(930);

    // Accepted once due again: sent, and nothing waits.
    await smtp.refuse(null);
    server.advance(3600);
    // The attempt is counted once its outcome is recorded, a moment after the store shows it.
    const sent = await scrapeUntil('the message to be sent', (e) => outbox(e, 'sent') === 1 && attempts(e, 'sent') === 1);
    expect([outbox(sent, 'queued'), outbox(sent, 'failed'), oldestAge(sent), attempts(sent, 'sent'), attempts(sent, 'failed')]).toEqual([0, 0, 0, 1, 0]);

    // Refused for good: failed at once.
    await smtp.refuse('permanent');
    try {
      await emitEvent('Pipeline #2 failed');
      const failed = await scrapeUntil('the message to fail', (e) => outbox(e, 'failed') === 1 && attempts(e, 'failed') === 1);
      expect([outbox(failed, 'queued'), outbox(failed, 'sent'), attempts(failed, 'failed'), attempts(failed, 'sent')]).toEqual([0, 1, 1, 1]);
    } finally {
      await smtp.refuse(null);
    }
  });
});

describe('the server itself', () => {
  it('names its version and Node.js\'s in tokenbell_build_info', async () => {
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(sample(await text(), `tokenbell_build_info{version="${version}",node_version="${process.versions.node}"}`)).toBe(1);
  });

  it('says whether the test helpers are on', async () => {
    expect(sample(await text(), 'tokenbell_test_helpers_enabled')).toBe(1);
    const plain = await startTestServer();
    try {
      expect(sample(await text(plain), 'tokenbell_test_helpers_enabled')).toBe(0);
    } finally {
      await plain.close();
    }
  });

  it('reports the PostgreSQL pool on PostgreSQL only', async () => {
    const exposition = await text();
    const pool = ['tokenbell_database_pool_connections{state="in_use"}', 'tokenbell_database_pool_connections{state="idle"}', 'tokenbell_database_pool_waiting'].map((s) => sample(exposition, s));
    if (server.kind === 'file') {
      expect(exposition).not.toContain('tokenbell_database_pool');
      return;
    }
    const [inUse, idle, waiting] = pool as [number, number, number];
    // Read before the scrape's own question about the outbox; the delivery worker may hold a connection meanwhile.
    expect(inUse).toBeGreaterThanOrEqual(0);
    expect(idle).toBeGreaterThanOrEqual(1);
    expect(inUse + idle).toBeLessThanOrEqual(10);
    expect(waiting).toBe(0);
  });
});

describe('the format, by Accept', () => {
  const prometheusType = 'text/plain; version=0.0.4; charset=utf-8';
  const openMetricsType = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

  it('answers OpenMetrics to whoever asks for it, by any version, and the Prometheus text to the rest', async () => {
    const cases: Array<[string | undefined, string]> = [
      ['application/openmetrics-text', openMetricsType],
      ['application/openmetrics-text; version=1.0.0', openMetricsType],
      ['application/openmetrics-text;version=0.0.1', openMetricsType],
      ['Application/OpenMetrics-Text; version=2.0.0; charset=utf-8', openMetricsType],
      ['application/*', openMetricsType],
      // Prometheus' own scrape.
      ['application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1', openMetricsType],
      ['text/plain;q=1, application/openmetrics-text;q=0.5', prometheusType],
      ['text/plain; version=0.0.4', prometheusType],
      ['text/plain; version=0.0.4; q=0.5, application/openmetrics-text; version=1.0.0; q=0.4', prometheusType],
      ['*/*', prometheusType],
      ['application/json', prometheusType],
      [undefined, prometheusType],
    ];
    for (const [accept, type] of cases) {
      const response = await scrape(server, accept);
      expect(response.status, accept).toBe(200);
      expect(response.headers.get('content-type'), accept).toBe(type);
      expect(response.headers.get('vary'), accept).toMatch(/accept/i);
      const body = await response.text();
      if (type === openMetricsType) expect(body.endsWith('\n# EOF\n'), accept).toBe(true);
      else expect(body, accept).not.toContain('# EOF');
    }
  });

  it('writes counters as each format names them, whichever was asked first', async () => {
    // A scrape answered, so that its request is counted.
    await text();
    const open = await (await scrape(server, 'application/openmetrics-text')).text();
    expect(open).toContain('# TYPE tokenbell_http_requests counter\n');
    expect(open).toMatch(/^tokenbell_http_requests_total\{method="GET",route="\/-\/metrics",status="200"\} \d+$/m);
    expect(open).toMatch(/^tokenbell_build_info\{version="[^"]+",node_version="[^"]+"\} 1$/m);
    // After an OpenMetrics scrape, the Prometheus text still calls a counter by its whole name.
    const plain = await text();
    expect(plain).toContain('# TYPE tokenbell_http_requests_total counter\n');
    expect(plain).toMatch(/^tokenbell_http_requests_total\{method="GET",route="\/-\/metrics",status="200"\} \d+$/m);
    expect(plain).toMatch(/^process_cpu_seconds_total \S+$/m);
  });
});
