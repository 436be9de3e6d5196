// The API's actual cross-origin requests get their headers set directly (cors.ts), not through the cors package on
// every request: the headers must stay exactly those the package sets with the same policy, and preflights its own.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import cors from 'cors';
import express, { type RequestHandler } from 'express';
import { expect, it } from 'vitest';
import { corsPolicy, crossOrigin } from '../../src/http/cors.js';

const packaged = cors({ origin: '*', credentials: false, methods: [...corsPolicy.methods], exposedHeaders: [...corsPolicy.exposedHeaders], maxAge: corsPolicy.maxAge });

async function answers(step: RequestHandler, method: string, headers: Record<string, string>) {
  const app = express().use(step).all('/x', (_req, res) => void res.json({}));
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/x`, { method, headers });
    await response.text();
    const kept = [...response.headers].filter(([name]) => name.startsWith('access-control-') || name === 'vary');
    return { status: response.status, headers: Object.fromEntries(kept) };
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

it('sets what the cors package sets, for actual requests and preflights alike', async () => {
  const cases: Array<[string, Record<string, string>]> = [
    ['GET', { origin: 'https://app.example' }],
    ['GET', {}],
    ['POST', { origin: 'https://app.example', 'content-type': 'application/json' }],
    ['OPTIONS', { origin: 'https://app.example', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'authorization' }],
  ];
  for (const [method, headers] of cases) {
    const ours = await answers(crossOrigin, method, headers);
    expect(ours, method).toEqual(await answers(packaged, method, headers));
    expect(ours.headers['access-control-allow-origin']).toBe('*');
  }
});
