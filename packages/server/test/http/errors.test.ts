import express from 'express';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/domain/storage/index.js';
import { HttpError, errorHandler, lastResortHandler } from '../../src/http/errors.js';

// With --validate-responses, the validator wraps res.json and throws when an error body breaks the document;
// this app does the same in one line, so the error handler's own answer fails.
let baseUrl: string;
let close: () => void;
const logs: string[] = [];

beforeAll(async () => {
  const app = express();
  app.use((_req, res, next) => {
    res.json = () => {
      throw new Error('response body must NOT have additional properties at /srv/secret/path.ts:1:1');
    };
    next();
  });
  app.get('/api/v3/broken', () => {
    throw new HttpError(410, '410 Gone');
  });
  app.use(errorHandler((m) => logs.push(m)));
  app.use(lastResortHandler((m) => logs.push(m)));
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  close = () => server.close();
});
afterAll(() => close());

it('answers a bare 500 without a stack when answering an error fails', async () => {
  const response = await fetch(`${baseUrl}/api/v3/broken`);
  expect(response.status).toBe(500);
  const text = await response.text();
  expect(JSON.parse(text)).toEqual({ message: '500 Internal Server Error' });
  expect(text).not.toMatch(/secret|\.ts|at /);
  expect(logs.join('\n')).toMatch(/failed while answering an error/);
});

describe('a store that cannot be reached', () => {
  let unavailableUrl: string;
  let stop: () => void;
  const logged: string[] = [];

  beforeAll(async () => {
    const app = express();
    app.use((_req, _res, next) => next(new StoreUnavailableError('the database cannot be reached: Query read timeout')));
    app.use(errorHandler((m) => logged.push(m)));
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    unavailableUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    stop = () => server.close();
  });
  afterAll(() => stop());

  it('is a 503 with Retry-After in each area’s format, and no stack in the log', async () => {
    const api = await fetch(`${unavailableUrl}/api/v3/user`, { method: 'PUT' });
    expect([api.status, api.headers.get('retry-after'), await api.json()]).toEqual([503, '5', { message: '503 Service Unavailable' }]);

    const token = await fetch(`${unavailableUrl}/oauth/token`, { method: 'POST' });
    expect([token.status, token.headers.get('retry-after'), token.headers.get('cache-control')]).toEqual([503, '5', 'no-store']);
    expect(await token.json()).toEqual({ error: 'temporarily_unavailable', error_description: 'The server cannot reach its data just now; try again shortly.' });

    const page = await fetch(`${unavailableUrl}/profile/applications`);
    expect([page.status, page.headers.get('retry-after'), page.headers.get('content-type')]).toEqual([503, '5', 'text/html; charset=utf-8']);
    expect(await page.text()).toContain('<h1>Temporarily unavailable</h1>');
    // The request log's line says it, once per request (test/hardening/database-outage.test.ts).
    expect(logged).toEqual([]);
  });
});
