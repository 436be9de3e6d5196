// Queued faults on a tiny application (http/faults.ts): which request a fault answers, in which format, late or
// instead of the real answer, and that an empty queue costs nothing.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type TestKitApp, basic, settled, startTestKitApp } from '../support/test-kit-app.js';

let app: TestKitApp;
beforeEach(async () => {
  app = await startTestKitApp();
});
afterEach(() => app.close());

const tokenRequest = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${app.baseUrl}/oauth/token`, { method: 'POST', headers, body: new URLSearchParams({ grant_type: 'password', username: 'jane', password: 'pw', ...fields }) });

async function answer(response: Response) {
  return {
    status: response.status,
    body: (await response.json()) as unknown,
    cacheControl: response.headers.get('cache-control'),
    noSniff: response.headers.get('x-content-type-options'),
    challenge: response.headers.get('www-authenticate'),
  };
}

describe('faultInjection', () => {
  it('answers an API path with an API error, worded as the server words it unless a message is given', async () => {
    app.faults.add({ match: { path: '/api/v4/user' }, answer: { status: 500 } });
    app.faults.add({ match: { path: '/api/v3/user' }, answer: { status: 404, message: '404 User Not Found' } });
    expect(await answer(await fetch(`${app.baseUrl}/api/v3/user`))).toEqual({
      status: 500,
      body: { message: '500 Internal Server Error' },
      cacheControl: 'no-store',
      noSniff: 'nosniff',
      challenge: null,
    });
    expect(await answer(await fetch(`${app.baseUrl}/api/v4/user`))).toMatchObject({ status: 404, body: { message: '404 User Not Found' } });
    expect((await fetch(`${app.baseUrl}/api/v4/user`)).status).toBe(200);
    expect(app.counts.routes).toBe(1);
  });

  it('answers the OAuth endpoints with RFC 6749 errors, the code and status defaulting as the document says', async () => {
    const cases: Array<[object, number, object, string | null]> = [
      [{ error: 'invalid_grant' }, 400, { error: 'invalid_grant' }, null],
      [{ error: 'invalid_grant', message: 'The refresh token was revoked.' }, 400, { error: 'invalid_grant', error_description: 'The refresh token was revoked.' }, null],
      [{ error: 'invalid_client' }, 401, { error: 'invalid_client' }, 'Basic realm="tokenbell"'],
      [{ status: 401 }, 401, { error: 'invalid_client' }, 'Basic realm="tokenbell"'],
      [{ status: 503 }, 503, { error: 'server_error' }, null],
      [{ status: 500, error: 'temporarily_unavailable' }, 500, { error: 'temporarily_unavailable' }, null],
      [{ status: 429 }, 429, { error: 'invalid_request' }, null],
      [{ status: 400, error: 'invalid_scope' }, 400, { error: 'invalid_scope' }, null],
    ];
    for (const [faultAnswer, status, body, challenge] of cases) {
      app.faults.add({ match: { path: '/oauth/token' }, answer: faultAnswer });
      const got = await answer(await tokenRequest({}));
      expect(got, JSON.stringify(faultAnswer)).toEqual({ status, body, cacheControl: 'no-store', noSniff: 'nosniff', challenge });
    }
    app.faults.add({ match: { path: '/oauth/revoke' }, answer: { status: 503 } });
    expect(await answer(await fetch(`${app.baseUrl}/oauth/revoke`, { method: 'POST' }))).toMatchObject({ status: 503, body: { error: 'server_error' } });
    expect(app.counts.routes).toBe(0);
  });

  it('answers a page path with the API error too', async () => {
    app.faults.add({ match: { path: '/users/sign_in' }, answer: { status: 502 } });
    expect(await answer(await fetch(`${app.baseUrl}/users/sign_in`))).toMatchObject({ status: 502, body: { message: '502 Bad Gateway' } });
  });

  it('matches on method, grant type and client (Basic, body or query), and the journal shows which fault answered', async () => {
    const byMethod = app.faults.add({ match: { method: 'POST', path: '/api/v3/user' }, answer: { status: 500 } });
    const byGrant = app.faults.add({ match: { grant_type: 'refresh_token' }, answer: { error: 'invalid_grant' } });
    const byBasic = app.faults.add({ match: { client_id: 'basic app' }, answer: { status: 500 } });
    const byBody = app.faults.add({ match: { client_id: 'body-app' }, answer: { status: 500 } });
    const byQuery = app.faults.add({ match: { client_id: 'query-app' }, answer: { status: 500 } });

    expect((await fetch(`${app.baseUrl}/api/v3/user`)).status).toBe(200);
    expect((await tokenRequest({ grant_type: 'password' })).status).toBe(200);
    expect((await tokenRequest({ grant_type: 'refresh_token', refresh_token: 'r' })).status).toBe(400);
    expect((await tokenRequest({}, { authorization: basic('basic+app', 'secret') })).status).toBe(500);
    expect((await tokenRequest({ client_id: 'body-app' })).status).toBe(500);
    expect((await fetch(`${app.baseUrl}/api/v3/user?client_id=query-app`)).status).toBe(500);
    expect(app.faults.list().map((f) => f.id)).toEqual([byMethod.id]);

    const entries = await settled(app.journal, 6);
    expect(entries.map((e) => [e.status, e.fault])).toEqual([
      [500, byQuery.id],
      [500, byBody.id],
      [500, byBasic.id],
      [400, byGrant.id],
      [200, null],
      [200, null],
    ]);
  });

  it('answers `times` requests, then the real answers follow', async () => {
    app.faults.add({ match: { method: 'GET' }, answer: { status: 500 }, times: 3 });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await fetch(`${app.baseUrl}/api/v3/user`)).status);
    expect(statuses).toEqual([500, 500, 500, 200]);
    expect(app.faults.size).toBe(0);
  });

  it('delays the real answer by delay_ms, or the queued one when it has a status', async () => {
    const delayed = app.faults.add({ match: { path: '/api/v4/user' }, answer: { delay_ms: 200 } });
    app.faults.add({ match: { path: '/oauth/token' }, answer: { delay_ms: 150, status: 503 } });
    let started = performance.now();
    const real = await fetch(`${app.baseUrl}/api/v3/user`);
    expect(real.status).toBe(200);
    expect(await real.json()).toEqual({ username: 'jane' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    started = performance.now();
    expect((await tokenRequest({})).status).toBe(503);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    const entries = await settled(app.journal, 2);
    expect(entries[1]).toMatchObject({ path: '/api/v3/user', status: 200, fault: delayed.id });
    expect(entries[1]!.duration_ms).toBeGreaterThanOrEqual(190);
  });

  it('does nothing more for a client that went away during the delay', async () => {
    app.faults.add({ match: {}, answer: { delay_ms: 300 } });
    const abort = new AbortController();
    const pending = fetch(`${app.baseUrl}/api/v3/user`, { signal: abort.signal });
    setTimeout(() => abort.abort(), 50);
    await expect(pending).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(app.counts.routes).toBe(0);
  });

  it('never answers the test-helper area, whatever the match', async () => {
    app.faults.add({ match: {}, answer: { status: 500 } });
    app.faults.add({ match: { path: '/api/v4/test_helpers/requests' }, answer: { status: 500 } });
    for (const path of ['/api/v3/test_helpers/requests', '/api/v4/test_helpers/requests', '/API/V3/TEST_HELPERS/requests']) {
      expect((await fetch(`${app.baseUrl}${path}`)).status, path).toBe(200);
    }
    expect(app.faults.size).toBe(2);
  });

  it('parses no body unless a queued fault matches on what a body carries, and then only once', async () => {
    expect((await tokenRequest({})).status).toBe(200);
    app.faults.add({ match: { path: '/oauth/token', method: 'POST' }, answer: { delay_ms: 1 } });
    expect((await tokenRequest({})).status).toBe(200);
    expect(app.counts.parses).toBe(0);

    app.faults.add({ match: { grant_type: 'refresh_token' }, answer: { status: 500 } });
    const response = await tokenRequest({ client_id: 'an-app' });
    expect(response.status).toBe(200);
    // The route still sees the body the fault middleware parsed.
    expect(await response.json()).toMatchObject({ received: { grant_type: 'password', client_id: 'an-app' } });
    expect(app.counts.parses).toBe(1);
  });
});
