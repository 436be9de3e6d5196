// Two instances on one PostgreSQL database, as behind a load balancer: every piece of state is shared (users,
// applications, codes, sessions, the cookie key and the sign-in throttle), so a user signs in on one and consents on
// the other, and signing out on either ends the session on both.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { limits } from '../../src/config.js';
import { LoginThrottle } from '../../src/domain/login-throttle.js';
import type { Backend } from '../../src/store/backend.js';
import { openPostgresBackend } from '../../src/store/postgres/backend.js';
import { loadSeed } from '../../src/domain/seed/load.js';
import { Agent, consentFields, signIn } from '../support/agent.js';
import { exampleSeedPath, seed, startTestServer, type TestServer } from '../support/server.js';
import { freshMigratedDatabase } from '../../../../test/support/postgres.js';

let database: { url: string; drop(): Promise<void> } | undefined;
const backends: Backend[] = [];
let one: TestServer;
let two: TestServer;

beforeAll(async () => {
  database = await freshMigratedDatabase(inject('postgresUrl'));
  for (let i = 0; i < 2; i++) backends.push(await openPostgresBackend({ url: database.url, poolSize: 5, migrate: false }));
  await loadSeed(backends[0]!.storage, JSON.parse(await readFile(exampleSeedPath, 'utf8')));
  const start = (backend: Backend) => startTestServer({ backend, throttle: new LoginThrottle(limits.loginThrottle, backend.throttleBacking) });
  one = await start(backends[0]!);
  two = await start(backends[1]!);
});

afterAll(async () => {
  await one?.close();
  await two?.close();
  for (const backend of backends) await backend.storage.maintenance.close();
  await database?.drop();
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
