// The request log's levels and messages, line by line (the CLI's whole flow and its secrets are in
// hardening/request-log.test.ts): one line per answer, warn for refusals, error for failures, and a client that
// leaves before its answer logged as aborted, not as the server's failure.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import express from 'express';
import { expect, it } from 'vitest';
import { requestLogger } from '../../src/http/request-log.js';

it('logs each answer once at its level, and an abandoned request as aborted', async () => {
  const output = new PassThrough();
  const lines: Array<Record<string, unknown>> = [];
  output.on('data', (chunk: Buffer) => lines.push(...chunk.toString().trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)));
  const log = requestLogger({ level: 'info', format: 'json', destination: output });
  let hanging: (() => void) | undefined;
  const app = express()
    .use(log)
    .get('/ok', (_req, res) => void res.json({}))
    .get('/refused', (_req, res) => void res.status(404).json({ message: '404 Not Found' }))
    .get('/broken', (_req, res) => void res.status(500).json({ message: '500 Internal Server Error' }))
    .get('/hang', (_req, res) => {
      hanging = () => res.end();
    });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    for (const path of ['/ok', '/refused', '/broken']) await (await fetch(`${base}${path}`)).text();
    const abandoned = new AbortController();
    const pending = fetch(`${base}/hang`, { signal: abandoned.signal }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 100));
    abandoned.abort();
    await pending;
    await new Promise((resolve) => setTimeout(resolve, 200));
    hanging?.();
  } finally {
    server.closeAllConnections();
    server.close();
  }
  const byPath = (path: string) => lines.filter((line) => (line.req as { url: string }).url === path);
  expect(byPath('/ok')).toEqual([expect.objectContaining({ level: 30, msg: 'request completed', res: { statusCode: 200 }, route: '/ok' })]);
  expect(byPath('/refused')).toEqual([expect.objectContaining({ level: 40, msg: 'request completed', res: { statusCode: 404 } })]);
  expect(byPath('/broken')).toEqual([expect.objectContaining({ level: 50, msg: 'request errored', err: { type: 'Error', message: 'failed with status code 500' } })]);
  expect(byPath('/hang')).toEqual([expect.objectContaining({ level: 40, msg: 'request aborted', res: { statusCode: null } })]);
  for (const line of lines) expect(typeof line.responseTime).toBe('number');
});
