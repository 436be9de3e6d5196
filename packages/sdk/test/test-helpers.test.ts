import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TokenbellApiError, TokenbellNotFoundError, TokenbellValidationError } from '../src/index.js';
import { createTokenbellTestHelpers } from '../src/test-helpers.js';

// The helpers over real HTTP (node:http on a loopback port), so that what is asserted is what went over the wire:
// method, path and query, headers, and the body as the server read it.
interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let server: Server;
let baseUrl = '';
let received: Received[] = [];
let answer: { status: number; body?: unknown } = { status: 200, body: {} };

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (answer.body === undefined) return res.writeHead(answer.status).end();
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  received = [];
  answer = { status: 200, body: {} };
});

const helpers = () => createTokenbellTestHelpers({ baseUrl, token: 'glpat-admin' });
const only = () => {
  expect(received).toHaveLength(1);
  return received[0]!;
};

describe('createTokenbellTestHelpers', () => {
  it('creates a user: POST with a JSON body and the token as PRIVATE-TOKEN, answering the user', async () => {
    const user = { id: 7, username: 'awong', name: 'Alice Wong', email: 'awong@example.com' };
    answer = { status: 201, body: user };
    await expect(helpers().createUser({ username: 'awong', email: 'awong@example.com', name: 'Alice Wong', password: 'correct horse' })).resolves.toEqual(user);
    const request = only();
    expect(request).toMatchObject({ method: 'POST', url: '/api/v3/test_helpers/users' });
    expect(request.headers).toMatchObject({ 'private-token': 'glpat-admin', 'content-type': 'application/json' });
    expect(request.headers.authorization).toBeUndefined();
    expect(JSON.parse(request.body)).toEqual({ username: 'awong', email: 'awong@example.com', name: 'Alice Wong', password: 'correct horse' });
  });

  it('sends other credentials as the main client does', async () => {
    await createTokenbellTestHelpers({ baseUrl, auth: { accessToken: 'tba_1' } }).clock();
    expect(only().headers).toMatchObject({ authorization: 'Bearer tba_1' });
    expect(only().headers['private-token']).toBeUndefined();
  });

  it('wraps the arguments a test passes bare: the clock in seconds, automatic approval by username or null', async () => {
    const h = helpers();
    await h.advanceClock(3600);
    await h.setAutoApproval('awong');
    await h.setAutoApproval(null);
    expect(received.map(({ method, url, body }) => [method, url, body])).toEqual([
      ['POST', '/api/v3/test_helpers/clock', '{"seconds":3600}'],
      ['PUT', '/api/v3/test_helpers/auto_approval', '{"username":"awong"}'],
      ['PUT', '/api/v3/test_helpers/auto_approval', '{"username":null}'],
    ]);
  });

  it('puts filters in the query and encodes a project path once', async () => {
    answer = { status: 200, body: [] };
    const h = helpers();
    await expect(h.requests({ method: 'POST', path: '/oauth/token', per_page: 5 })).resolves.toEqual([]);
    await h.requests();
    await h.notificationMessages({ username: 'jsmith' });
    answer = { status: 201, body: { id: 'e1', recipients: [] } };
    await h.emitNotificationEvent('acme/widgets', { kind: 'failed_pipeline', title: 'Pipeline #42 failed', author: 'jsmith' });
    expect(received.map(({ method, url }) => `${method} ${url}`)).toEqual([
      'GET /api/v3/test_helpers/requests?method=POST&path=%2Foauth%2Ftoken&per_page=5',
      'GET /api/v3/test_helpers/requests',
      'GET /api/v3/test_helpers/notification_messages?username=jsmith',
      'POST /api/v3/test_helpers/projects/acme%2Fwidgets/notification_events',
    ]);
  });

  it('resolves the 204 operations to nothing, sending no body', async () => {
    answer = { status: 204 };
    const h = helpers();
    await expect(h.reset()).resolves.toBeUndefined();
    await expect(h.clearRequests()).resolves.toBeUndefined();
    await expect(h.clearFaults()).resolves.toBeUndefined();
    expect(received.map(({ method, url, body }) => [method, url, body])).toEqual([
      ['POST', '/api/v3/test_helpers/reset', ''],
      ['DELETE', '/api/v3/test_helpers/requests', ''],
      ['DELETE', '/api/v3/test_helpers/faults', ''],
    ]);
  });

  it('throws a 400 as the main entry\'s TokenbellValidationError, with the server\'s message', async () => {
    const message = '400 Bad request - seconds must be at least 1';
    answer = { status: 400, body: { message } };
    const error: unknown = await helpers().advanceClock(0).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenbellValidationError);
    expect(error).toMatchObject({ status: 400, message, body: { message }, request: `POST ${baseUrl}/api/v3/test_helpers/clock` });
  });

  it('throws for a 204 operation too, and a 404 (an instance without test helpers) as not found', async () => {
    const message = '400 Bad request - a shared database cannot be reset';
    answer = { status: 400, body: { message } };
    const error: unknown = await helpers().reset().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TokenbellValidationError);
    expect(error).toMatchObject({ message });
    answer = { status: 404, body: { message: '404 Not Found' } };
    await expect(helpers().faults()).rejects.toBeInstanceOf(TokenbellNotFoundError);
    await expect(helpers().faults()).rejects.toBeInstanceOf(TokenbellApiError);
  });
});
