// Two instances sharing one PostgreSQL for their sessions, cookie key and sign-in throttle, as behind a load
// balancer: a user signs in on one and consents on the other, and signing out on either ends the session on both.
// (Users, applications and codes still live in each instance's own store here, seeded alike.)
import pg from 'pg';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { limits } from '../../src/config.js';
import { LoginThrottle } from '../../src/domain/login-throttle.js';
import { instanceSecret } from '../../src/store/postgres/maintenance.js';
import { postgresThrottleBacking } from '../../src/store/postgres/throttle.js';
import { postgresSessionStorage } from '../../src/store/session-storage.js';
import { Agent, consentFields, signIn } from '../support/agent.js';
import { seed, startTestServer, type TestServer } from '../support/server.js';
import { migratedDatabase } from '../../../../test/support/postgres.js';

let pool: pg.Pool;
let close: (() => Promise<void>) | undefined;
let one: TestServer;
let two: TestServer;

beforeAll(async () => {
  const database = await migratedDatabase(inject('postgresUrl'));
  [pool] = database.pools as [pg.Pool];
  close = database.close;
  const shared = async () => ({
    sessions: { storage: postgresSessionStorage(pool), secret: await instanceSecret(pool, 'session_key') },
    throttle: new LoginThrottle(limits.loginThrottle, postgresThrottleBacking(pool)),
  });
  one = await startTestServer(await shared());
  two = await startTestServer(await shared());
  // The throttle remembers sign-in addresses per user row.
  for (const user of one.store.data.users) {
    await pool.query(`INSERT INTO users (id, username, email, name, password_hash) VALUES ($1, $2, $3, $4, 'x')`, [user.id, user.username, user.email, user.name]);
  }
});

afterAll(async () => {
  await one?.close();
  await two?.close();
  await close?.();
});

/** The same browser (cookie jar) talking to the other instance. */
function sameBrowser(agent: Agent, server: TestServer): Agent {
  const other = new Agent(server.baseUrl);
  for (const [name, value] of agent.cookies) other.cookies.set(name, value);
  return other;
}

it('signs in on one instance and consents on the other, and a sign-out on either ends the session on both', async () => {
  const onOne = new Agent(one.baseUrl);
  expect((await signIn(onOne, seed.jsmith.username, seed.jsmith.password)).status).toBe(302);

  const onTwo = sameBrowser(onOne, two);
  const query = new URLSearchParams({ client_id: seed.client.id, redirect_uri: seed.redirectUri, response_type: 'code', scope: 'api', state: 'across' });
  const consent = await onTwo.get(`/oauth/authorize?${query.toString()}`);
  expect(consent.status).toBe(200);
  const page = await consent.text();
  expect(page).toContain('Authorize Example App to use your account?');
  const approved = await onTwo.post('/oauth/authorize', { ...consentFields(page), decision: 'approve' });
  expect(approved.status).toBe(302);
  const callback = new URL(approved.headers.get('location')!);
  expect(callback.searchParams.get('state')).toBe('across');
  expect(callback.searchParams.get('code')).toMatch(/.{20,}/);

  const signOutPage = await (await onTwo.get('/profile/applications')).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(signOutPage)![1]!;
  expect((await onTwo.post('/users/sign_out', { _csrf: csrf })).status).toBe(302);
  const after = await onOne.get('/profile/applications');
  expect(after.status).toBe(302);
  expect(after.headers.get('location')).toMatch(/^\/users\/sign_in/);
});

it('counts failed passwords on both instances against one limit', async () => {
  const failures = limits.loginThrottle.perLogin.failures;
  const statuses: number[] = [];
  for (let i = 0; i <= failures; i++) {
    const server = i % 2 === 0 ? one : two;
    const response = await fetch(`${server.baseUrl}/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'password', username: 'mallory', password: `wrong-${i}` }),
    });
    statuses.push(response.status);
  }
  expect(statuses).toEqual([...Array<number>(failures).fill(400), 429]);
});
