// A no-store JSON answer is written without res.send (json-answers.ts): it must be what res.send wrote, for plain
// requests, HEADs, conditional requests and a 204 alike.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import { expect, it } from 'vitest';
import { answerJsonExactly } from '../../src/http/json-answers.js';

/** The same route twice: through answerJsonExactly, and through res.send of the same bytes with no ETag. */
function apps(): [Express, Express] {
  const ours = express().disable('x-powered-by');
  answerJsonExactly(ours);
  ours.get('/a', (_req, res) => void res.setHeader('Cache-Control', 'no-store').json({ answer: 'é' }));
  ours.get('/none', (_req, res) => void res.setHeader('Cache-Control', 'no-store').status(204).json({}));
  const sent = express().disable('x-powered-by').set('etag', false);
  const send = (body: string, status = 200) => (_req: express.Request, res: express.Response) =>
    void res.status(status).setHeader('Cache-Control', 'no-store').setHeader('Content-Type', 'application/json').send(Buffer.from(body));
  sent.get('/a', send('{"answer":"é"}'));
  sent.get('/none', send('{}', 204));
  return [ours, sent];
}

async function answer(app: Express, path: string, method: string, headers: Record<string, string>) {
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`, { method, headers });
    const kept = [...response.headers].filter(([name]) => !['date', 'connection', 'keep-alive'].includes(name));
    return { status: response.status, headers: Object.fromEntries(kept), body: await response.text() };
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

it('writes a no-store JSON answer as res.send would', async () => {
  const [ours, sent] = apps();
  const cases: Array<[string, string, Record<string, string>]> = [
    ['/a', 'GET', {}],
    ['/a', 'HEAD', {}],
    ['/a', 'GET', { 'if-none-match': '*' }],
    ['/a', 'GET', { 'if-modified-since': new Date().toUTCString() }],
    ['/none', 'GET', {}],
  ];
  for (const [path, method, headers] of cases) {
    expect(await answer(ours, path, method, headers), `${method} ${path} ${JSON.stringify(headers)}`).toEqual(await answer(sent, path, method, headers));
  }
  expect(await answer(ours, '/a', 'GET', {})).toEqual({ status: 200, headers: { 'cache-control': 'no-store', 'content-type': 'application/json', 'content-length': '15' }, body: '{"answer":"é"}' });
});
