// Browser sessions end: after 8 hours without a request (idle), and, however active, a fixed time after sign-in
// (--session-lifetime, 24 hours by default). Both are measured with the server's clock, which the tests move.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest } from '../../src/domain/secrets.js';
import { Agent, signIn } from '../support/agent.js';
import { seed, startTestServer, type TestServer } from '../support/server.js';

const hours = (n: number) => n * 60 * 60;
const servers: TestServer[] = [];
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  servers.push(server);
});
afterAll(() => Promise.all(servers.map((s) => s.close())));

async function signedIn(on: TestServer): Promise<Agent> {
  const agent = new Agent(on.baseUrl);
  expect((await signIn(agent, 'jsmith', seed.jsmith.password)).status).toBe(302);
  return agent;
}
const page = (agent: Agent) => agent.get('/profile/applications');
const expectSignedIn = async (agent: Agent) => expect((await page(agent)).status).toBe(200);
async function expectSignedOut(agent: Agent) {
  const response = await page(agent);
  expect(response.status).toBe(302);
  expect(response.headers.get('location')).toMatch(/^\/users\/sign_in/);
}
const sidOf = (agent: Agent) => decodeURIComponent(agent.sid!).replace(/^s:/, '').split('.')[0]!;

describe('the idle timeout', () => {
  it('keeps a session that makes a request within 8 hours, and ends one that makes none for 8 hours', async () => {
    const agent = await signedIn(server);
    const sid = sidOf(agent);
    server.advance(hours(8) - 60);
    await expectSignedIn(agent);
    server.advance(hours(8));
    await expectSignedOut(agent);
    // Expired on the server's clock, so the hourly clean-up drops it. (Asked at time 0, the session is found
    // whatever its expiry: stored, or not.)
    expect(await server.storage.sessions.find(digest(sid), 0)).not.toBeNull();
    await server.storage.maintenance.prune(server.now());
    expect(await server.storage.sessions.find(digest(sid), 0)).toBeNull();
  });
});

describe('the absolute lifetime', () => {
  it('ends an active session 24 hours after sign-in by default', async () => {
    const agent = await signedIn(server);
    for (let elapsed = 4; elapsed < 24; elapsed += 4) {
      server.advance(hours(4));
      await expectSignedIn(agent);
    }
    server.advance(hours(4));
    await expectSignedOut(agent);
    // Signing in again starts a new lifetime.
    await signIn(agent, 'jsmith', seed.jsmith.password);
    await expectSignedIn(agent);
  });

  it('follows --session-lifetime', async () => {
    const short = await startTestServer({ sessionLifetime: 3600 });
    servers.push(short);
    const agent = await signedIn(short);
    short.advance(3000);
    await expectSignedIn(agent);
    short.advance(600);
    await expectSignedOut(agent);
  });
});
