import express from 'express';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
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
