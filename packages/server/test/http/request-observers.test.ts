// What every request pays for being observed (issue 42, item 3): the metrics count it without prom-client's
// labelled calls (no label object or key per request; the counts reach prom-client at a scrape), and at a log level
// that keeps no completed answers the request log builds no line for one.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import express from 'express';
import { expect, it, vi } from 'vitest';
import { Metrics } from '../../src/http/operations.js';
import { requestLogger } from '../../src/http/request-log.js';
import type { MailStorage, MaintenanceStorage } from '../../src/domain/storage/index.js';

async function serve(app: express.Express, run: (base: string) => Promise<void>): Promise<void> {
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

it('counts requests without a labelled prom-client call per request, and scrapes them as the same series', async () => {
  const maintenance = { observeWrites: () => undefined, poolUsage: () => null } as unknown as MaintenanceStorage;
  const mail = { summary: async () => null } as unknown as MailStorage;
  const metrics = new Metrics({ maintenance, mail, now: () => 0, testHelpers: false });
  const inc = vi.spyOn(metrics.requests, 'inc');
  const observe = vi.spyOn(metrics.latency, 'observe');
  const labels = vi.spyOn(metrics.requests, 'labels');
  const app = express()
    .use(metrics.observeRequests)
    .get('/things/:id', (_req, res) => void res.json({}))
    .get('/missing', (_req, res) => void res.status(404).json({}));
  await serve(app, async (base) => {
    for (const path of ['/things/1', '/things/2', '/things/3', '/missing']) await (await fetch(`${base}${path}`)).text();
  });
  // Counted once answered ('finish'), which the client may see first.
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect([inc.mock.calls.length, observe.mock.calls.length, labels.mock.calls.length]).toEqual([0, 0, 0]);
  const text = await metrics.prometheus();
  expect(text).toContain('tokenbell_http_requests_total{method="GET",route="/things/:id",status="200"} 3\n');
  expect(text).toContain('tokenbell_http_requests_total{method="GET",route="/missing",status="404"} 1\n');
  expect(text).toContain('tokenbell_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/things/:id"} 3\n');
  expect(text).toContain('tokenbell_http_request_duration_seconds_count{method="GET",route="/things/:id"} 3\n');
  // Cumulative buckets, as prom-client writes its own: every answer here took well under 2.5 s.
  expect(text).toContain('tokenbell_http_request_duration_seconds_bucket{le="2.5",method="GET",route="/things/:id"} 3\n');
  const sum = /^tokenbell_http_request_duration_seconds_sum\{method="GET",route="\/things\/:id"\} (\S+)$/m.exec(text)?.[1];
  expect(Number(sum)).toBeGreaterThan(0);
  // A second scrape reports the same counts, not twice them.
  expect(await metrics.prometheus()).toContain('tokenbell_http_requests_total{method="GET",route="/things/:id",status="200"} 3\n');
});

it('builds no line for a completed answer at --log-level warn, and still logs refusals', async () => {
  const output = new PassThrough();
  const lines: Array<Record<string, unknown>> = [];
  output.on('data', (chunk: Buffer) => lines.push(...chunk.toString().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)));
  const log = requestLogger({ level: 'warn', format: 'json', destination: output });
  const info = vi.spyOn(log.logger, 'info');
  const warn = vi.spyOn(log.logger, 'warn');
  const app = express()
    .use(log)
    .get('/ok', (_req, res) => void res.json({}))
    .get('/refused', (_req, res) => void res.status(404).json({}));
  await serve(app, async (base) => {
    for (const path of ['/ok', '/ok', '/refused']) {
      const response = await fetch(`${base}${path}`);
      await response.text();
      // The id is sent back at every level: a report quotes it.
      expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(info).not.toHaveBeenCalled();
  expect(warn).toHaveBeenCalledTimes(1);
  expect(lines).toEqual([expect.objectContaining({ level: 40, msg: 'request completed', res: { statusCode: 404 } })]);
});
