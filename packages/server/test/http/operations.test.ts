// The operations endpoints under /-/: health, liveness, readiness and Prometheus metrics, answered only to the
// monitoring allowlist (loopback by default), 404 to anyone else.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { limits } from '../../src/config.js';
import { form, seed, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ throttlePolicy: { ...limits.loginThrottle, perLogin: { failures: 2, windowSeconds: 600 } } });
});
afterAll(() => server.close());

const get = (on: TestServer, path: string) => fetch(`${on.baseUrl}${path}`);
/** The value of one sample line of the Prometheus text, 0 when absent. */
const sample = (text: string, line: RegExp) => Number(new RegExp(`^${line.source} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);

describe('from an allowed address', () => {
  it('answers health, liveness and readiness', async () => {
    const health = await get(server, '/-/health');
    expect(health.status).toBe(200);
    expect(await health.text()).toBe('tokenbell OK');
    expect(await (await get(server, '/-/liveness')).json()).toEqual({ status: 'ok' });
    expect(await (await get(server, '/-/readiness')).json()).toEqual({ status: 'ok', store_check: [{ status: 'ok' }], test_helpers: false });
    expect(health.headers.get('cache-control')).toBe('no-store');
  });

  it('counts requests by route and status, tokens by grant, throttle refusals and store commits', async () => {
    const before = await (await get(server, '/-/metrics')).text();
    const grants = () => fetch(`${server.baseUrl}/oauth/token`, form({ grant_type: 'password', username: 'jsmith', password: seed.jsmith.password }));
    expect((await grants()).status).toBe(200);
    for (let i = 0; i < 3; i++) await fetch(`${server.baseUrl}/oauth/token`, form({ grant_type: 'password', username: 'mallory', password: 'wrong' }));
    await fetch(`${server.baseUrl}/api/v3/user`, { headers: { 'private-token': seed.jsmith.pat } });
    const metrics = await get(server, '/-/metrics');
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain/);
    const after = await metrics.text();
    const delta = (line: RegExp) => sample(after, line) - sample(before, line);
    expect(delta(/tokenbell_token_grants_total\{grant_type="password"\}/)).toBe(1);
    expect(delta(/tokenbell_login_throttle_refusals_total/)).toBe(1);
    expect(delta(/tokenbell_http_requests_total\{method="GET",route="\/api\/v3\/user",status="200"\}/)).toBe(1);
    expect(delta(/tokenbell_store_commit_duration_seconds_count/)).toBeGreaterThanOrEqual(1);
    expect(after).toContain('tokenbell_http_request_duration_seconds_bucket');
    expect(after).toContain('process_cpu_seconds_total');
  });
});

describe('from an address outside the allowlist', () => {
  it('answers 404 in JSON for every operations path, as if they did not exist', async () => {
    const closed = await startTestServer({ monitoringAllowlist: ['10.0.0.0/8'] });
    try {
      for (const path of ['/-/health', '/-/liveness', '/-/readiness', '/-/metrics']) {
        const response = await get(closed, path);
        expect(response.status, path).toBe(404);
        expect(await response.json()).toEqual({ message: '404 Not Found' });
      }
      // X-Forwarded-For cannot name an allowed address.
      expect((await fetch(`${closed.baseUrl}/-/metrics`, { headers: { 'x-forwarded-for': '10.1.2.3' } })).status).toBe(404);
    } finally {
      await closed.close();
    }
  });
});

describe('behind a reverse proxy (--trust-proxy)', () => {
  const xff = (on: TestServer, address: string) => fetch(`${on.baseUrl}/-/metrics`, { headers: { 'x-forwarded-for': address } });

  it('judges the client address the trusted proxy reports, not the proxy on loopback that connects', async () => {
    // The test's requests come from loopback, as from a proxy on the same machine.
    const proxied = await startTestServer({ proxy: { baseUrl: 'https://tokenbell.example', trustProxy: 'loopback' } });
    const allowingTen = await startTestServer({ proxy: { baseUrl: 'https://tokenbell.example', trustProxy: 'loopback' }, monitoringAllowlist: ['10.0.0.0/8'] });
    try {
      expect((await xff(proxied, '203.0.113.9')).status).toBe(404);
      expect((await xff(proxied, '127.0.0.1')).status).toBe(200);
      expect((await xff(allowingTen, '10.1.2.3')).status).toBe(200);
      expect((await xff(allowingTen, '192.0.2.7')).status).toBe(404);
      // The proxy's own health check, without the header, is the peer's: loopback.
      expect((await get(proxied, '/-/health')).status).toBe(200);
    } finally {
      await Promise.all([proxied.close(), allowingTen.close()]);
    }
  });

  it('ignores X-Forwarded-For without --trust-proxy: the peer on loopback is judged', async () => {
    expect((await xff(server, '203.0.113.9')).status).toBe(200);
  });
});

describe('readiness', () => {
  it('answers 503 with the reason once the store cannot take writes', async () => {
    const other = await startTestServer();
    await other.storage.maintenance.close();
    const response = await get(other, '/-/readiness');
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: 'failed', store_check: [{ status: 'failed', message: 'the store is closed' }], test_helpers: false });
    expect((await get(other, '/-/liveness')).status).toBe(200);
    await other.close().catch(() => undefined);
  });
});
