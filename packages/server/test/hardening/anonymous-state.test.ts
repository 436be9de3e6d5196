// Anonymous visitors create no stored state: the sign-in page, a failed sign-in, and the pages that send a visitor
// to sign in store no session, whatever the traffic. Thousands of cookieless requests against a real data file leave
// the store's sessions, the file and its journal as they were; on PostgreSQL (the `postgres` test project), every
// table as it was but the sign-in throttle's counters, which the file store keeps in memory.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { limits } from '../../src/config.js';
import { journalFileOf } from '../../src/store/file/journal.js';
import { csrfOf } from '../support/agent.js';
import { startTestServer, testStoreKind, type TestServer } from '../support/server.js';

let dir: string;
let server: TestServer;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tokenbell-anonymous-'));
  // Generous limits: the failures here are about storage, not about guessing.
  const throttlePolicy = { ...limits.loginThrottle, perAddress: { failures: 10_000, windowSeconds: 600 } };
  server = await startTestServer({ ...(testStoreKind() === 'file' ? { file: join(dir, 'data.json') } : {}), throttlePolicy });
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

/** What is stored: the sizes of the data file and its journal, or every row of the database. */
const stored = async () => {
  if (server.kind === 'postgres') return server.tables(['rate_limits']);
  const file = join(dir, 'data.json');
  const [data, journal] = await Promise.all([stat(file), stat(journalFileOf(file)).catch(() => undefined)]);
  return { data: data.size, journal: journal?.size ?? 0 };
};
const sessionCount = () => server.count('sessions');

/** The cookies an answer sets, as a Cookie header. */
const cookiesOf = (response: Response) =>
  response.headers
    .getSetCookie()
    .map((line) => line.split(';')[0]!)
    .join('; ');

it('stores nothing for thousands of cookieless visits to the sign-in page and failed sign-ins', async () => {
  const before = await stored();
  expect(await sessionCount()).toBe(0);

  const visits = 3000;
  const failures = 100;
  for (let batch = 0; batch < visits; batch += 100) {
    await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const page = await fetch(`${server.baseUrl}/users/sign_in`);
        expect(page.status).toBe(200);
        const text = await page.text();
        if (batch + i >= failures) return;
        // A failed sign-in with a valid CSRF pair: it passes the CSRF check, and still stores nothing.
        const failed = await fetch(`${server.baseUrl}/users/sign_in`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookiesOf(page) },
          body: new URLSearchParams({ _csrf: csrfOf(text), login: `nobody-${batch + i}`, password: 'wrong password' }).toString(),
        });
        expect(failed.status).toBe(401);
      }),
    );
  }
  for (const path of ['/profile/applications', '/profile/personal_access_tokens', '/oauth/authorize?client_id=x&redirect_uri=https%3A%2F%2Fa.example%2Fcb&response_type=code']) {
    const response = await fetch(`${server.baseUrl}${path}`, { redirect: 'manual' });
    expect([302, 400]).toContain(response.status);
  }

  expect(await sessionCount()).toBe(0);
  expect(await stored()).toEqual(before);
}, 60_000);
