// Behind a TLS-terminating reverse proxy (--base-url https://..., --trust-proxy): the session cookie must still
// be set, Secure, and the sign-in throttle must count the client's address rather than the proxy's.
import { afterEach, describe, expect, it } from 'vitest';
import { limits } from '../../src/config.js';
import { LoginThrottle } from '../../src/domain/login-throttle.js';
import { memoryThrottleBacking } from '../../src/store/file/throttle.js';
import { Agent, signIn } from '../support/agent.js';
import { seed, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const overHttps = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'tokenbell.example' };

describe('behind a reverse proxy', () => {
  it('trusted: the sign-in works over the forwarded https, with a Secure session cookie', async () => {
    server = await startTestServer({ proxy: { baseUrl: 'https://tokenbell.example', trustProxy: 'loopback' } });
    const agent = new Agent(server.baseUrl);
    const page = await agent.get('/users/sign_in', overHttps);
    expect(page.status).toBe(200);
    // Before sign-in only the sign-in form's CSRF cookie, host-only and Secure.
    expect(agent.lastSetCookies).toHaveLength(1);
    expect(agent.lastSetCookies[0]).toMatch(/^__Host-tokenbell\.csrf=.*; Path=\/;.*Secure/);
    agent.cookies.clear();

    const signedIn = await signIn(agent, seed.jsmith.username, seed.jsmith.password, overHttps);
    expect(signedIn.status).toBe(302);
    expect(agent.lastSetCookies.find((c) => c.startsWith('tokenbell.sid='))).toMatch(/; Secure/);
    expect((await agent.get('/profile/applications', overHttps)).status).toBe(200);
  });

  it('not trusted: an https base URL reached over plain HTTP gets no session cookie, so sign-in cannot work', async () => {
    server = await startTestServer({ proxy: { baseUrl: 'https://tokenbell.example', trustProxy: false } });
    const agent = new Agent(server.baseUrl);
    const signedIn = await signIn(agent, seed.jsmith.username, seed.jsmith.password, overHttps);
    expect(agent.lastSetCookies.filter((c) => c.startsWith('tokenbell.sid='))).toEqual([]);
    expect(signedIn.status).toBe(302);
    expect((await agent.get('/profile/applications', overHttps)).status).toBe(302);
  });

  it.each([
    // A wrong password is 400 invalid_grant; a throttled attempt is 429.
    ['trusted', 'loopback', 400],
    ['not trusted', false, 429],
  ] as const)('%s: the throttle counts X-Forwarded-For addresses as clients only when the proxy is trusted', async (_name, trustProxy, other) => {
    const throttle = new LoginThrottle({
      ...limits.loginThrottle,
      perAddress: { failures: 3, windowSeconds: 600 },
      perLogin: { failures: 100, windowSeconds: 600 },
    }, memoryThrottleBacking());
    server = await startTestServer({ throttle, proxy: { baseUrl: 'https://tokenbell.example', trustProxy } });
    const grant = (address: string) =>
      fetch(`${server!.baseUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address },
        body: new URLSearchParams({ grant_type: 'password', username: 'jsmith', password: 'wrong' }),
      });
    for (let i = 0; i < 3; i++) expect((await grant('203.0.113.1')).status).toBe(400);
    expect((await grant('203.0.113.1')).status).toBe(429);
    // Another client behind the same proxy: its own count when the proxy is trusted, the proxy's otherwise.
    expect((await grant('203.0.113.2')).status).toBe(other);
  });
});
