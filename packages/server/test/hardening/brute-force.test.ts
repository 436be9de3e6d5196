// Password guessing, over real HTTP from several loopback addresses (127.0.0.x): the sign-in form and the password
// grant share per-address and per-login limits, answer 429 with Retry-After, never lock the real user out, and never
// tell a guesser which logins belong to one account or that a two-factor account's password was right.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { currentCode } from '../support/two-factor.js';
import { csrfOf } from '../support/agent.js';
import { seed, startTestServer, type TestServer } from '../support/server.js';
import { rawRequest, type RawResponse } from './support.js';

// The throttle's windows run on Date.now (rate-limiter-flexible's clock, on PostgreSQL too: it writes the window's end
// from this process), not on the instance's clock. On real seconds a busy machine ended a window before its attempts
// were all made (each one hashes), and the 429 expected after them was a 200. So Date stands still for this file and
// a window ends only when a test moves it on (endWindows). The window is still under a minute, so the answers say
// "seconds" as short windows do, and long enough that the memory limiter's own timer, which drops a count once the
// window has passed in real time, never fires while a test runs.
const windowSeconds = 59;
const policy = {
  perAddress: { failures: 6, windowSeconds },
  perLogin: { failures: 3, windowSeconds },
  deviceStartsPerAddress: { requests: 60, windowSeconds: 60 }, knownAddressSeconds: 3600,
};

let server: TestServer;
beforeAll(async () => {
  vi.setSystemTime(Date.now());
  server = await startTestServer({ throttlePolicy: policy });
});
afterAll(async () => {
  await server.close();
  vi.useRealTimers();
});

let nextAddress = 2;
/** A loopback address no earlier test used, so every test starts with fresh per-address counters. */
const freshAddress = () => `127.0.0.${nextAddress++}`;

const passwordGrant = (from: string, username: string, password: string) =>
  rawRequest(server.baseUrl, 'POST', '/oauth/token', { 'content-type': 'application/x-www-form-urlencoded' }, new URLSearchParams({ grant_type: 'password', username, password }).toString(), from);

/** The sign-in form as a browser at `from` would post it: page, cookie and CSRF token first. */
async function signInForm(from: string, login: string, password: string): Promise<RawResponse> {
  const page = await rawRequest(server.baseUrl, 'GET', '/users/sign_in', {}, undefined, from);
  const cookie = page.headers['set-cookie']![0]!.split(';')[0]!;
  const body = new URLSearchParams({ _csrf: csrfOf(page.body), login, password }).toString();
  return rawRequest(server.baseUrl, 'POST', '/users/sign_in', { 'content-type': 'application/x-www-form-urlencoded', cookie }, body, from);
}

/** Moves the clock past every window this file's server counts in (each test ends with this, so the next starts afresh). */
const endWindows = () => vi.setSystemTime(Date.now() + (windowSeconds + 1) * 1000);

function expectThrottledToken(response: RawResponse): void {
  expect(response.status).toBe(429);
  expect(response.headers['cache-control']).toBe('no-store');
  expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(Number(response.headers['retry-after'])).toBeLessThanOrEqual(windowSeconds);
  expect(JSON.parse(response.body)).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(/^Too many failed sign-in attempts\. Try again in \d+ seconds?\.$/) });
}

describe('per login', () => {
  it('refuses the password grant with 429 after too many failures, even with the right password, until the window ends', async () => {
    const attacker = freshAddress();
    for (let i = 0; i < policy.perLogin.failures; i++) {
      const response = await passwordGrant(attacker, 'jsmith', `wrong-${i}`);
      expect(response.status).toBe(400);
      expect(JSON.parse(response.body).error).toBe('invalid_grant');
    }
    expectThrottledToken(await passwordGrant(attacker, 'jsmith', seed.jsmith.password));
    // Another address the account never signed in from is refused too (the login is counted, in any case).
    expectThrottledToken(await passwordGrant(freshAddress(), 'JSmith', seed.jsmith.password));
    // Other accounts are not affected.
    expect((await passwordGrant(attacker, 'mallory', seed.mallory.password)).status).toBe(200);

    endWindows();
    expect((await passwordGrant(attacker, 'jsmith', seed.jsmith.password)).status).toBe(200);
  });

  it('does not tell a guesser that a username and an e-mail address belong to one account', async () => {
    const attacker = freshAddress();
    for (let i = 0; i < policy.perLogin.failures; i++) await passwordGrant(attacker, 'jsmith', `wrong-${i}`);
    expectThrottledToken(await passwordGrant(attacker, 'jsmith', 'wrong'));
    // The same account's e-mail address answers as any other login would: its own count has not been touched.
    const other = await passwordGrant(attacker, 'jsmith@example.com', 'wrong');
    expect(other.status).toBe(400);
    expect(JSON.parse(other.body).error).toBe('invalid_grant');
    endWindows();
  });

  it('refuses an exhausted unknown login exactly as an exhausted known one', async () => {
    const attacker = freshAddress();
    const exhaust = async (login: string) => {
      for (let i = 0; i < policy.perLogin.failures; i++) expect((await passwordGrant(attacker, login, `wrong-${i}`)).status).toBe(400);
      return passwordGrant(attacker, login, 'wrong');
    };
    const [known, unknown] = [await exhaust('mallory'), await exhaust('nobody-at-all')];
    expectThrottledToken(known);
    expectThrottledToken(unknown);
    // The same answer to the letter: the clock stands still while both are exhausted, so even the wait is the same.
    expect(unknown.body).toBe(known.body);
    endWindows();
  });

  it("counts a two-factor account's right password on the password grant as a failure, answered as one", async () => {
    const attacker = freshAddress();
    const wrong = await passwordGrant(attacker, 'awong', 'wrong');
    for (let i = 1; i < policy.perLogin.failures; i++) {
      const right = await passwordGrant(attacker, 'awong', seed.awong.password);
      expect(right.status).toBe(wrong.status);
      expect(right.body).toBe(wrong.body);
    }
    // Had the right password been a success for the count, a guesser would see it by not being refused here.
    expectThrottledToken(await passwordGrant(attacker, 'awong', seed.awong.password));
    endWindows();
  });

  it('lets the real user in from an address they signed in from before while an attacker exhausts the account', async () => {
    const home = freshAddress();
    expect((await signInForm(home, 'mallory', seed.mallory.password)).status).toBe(302);
    const attackers = [freshAddress(), freshAddress()];
    for (let i = 0; i < policy.perLogin.failures; i++) await passwordGrant(attackers[i % 2]!, 'mallory', `guess-${i}`);
    const refused = await signInForm(attackers[0]!, 'mallory', seed.mallory.password);
    expect(refused.status).toBe(429);

    const signedIn = await signInForm(home, 'mallory', seed.mallory.password);
    expect(signedIn.status).toBe(302);
    expect(signedIn.headers.location).toBe('/profile/applications');
    expect((await passwordGrant(home, 'mallory', seed.mallory.password)).status).toBe(200);
    endWindows();
  });
});

describe('per client address', () => {
  it('refuses sign-in with a 429 page and Retry-After once one address has failed too often, whatever the accounts', async () => {
    const attacker = freshAddress();
    // Sign-in and the password grant share one budget, so switching endpoints gains nothing.
    for (let i = 0; i < policy.perAddress.failures; i++) {
      const response = i % 2 === 0 ? await signInForm(attacker, `nobody-${i}`, 'wrong-password') : await passwordGrant(attacker, `nobody-${i}`, 'wrong');
      expect(response.status).toBe(i % 2 === 0 ? 401 : 400);
    }
    const page = await signInForm(attacker, 'jsmith', seed.jsmith.password);
    expect(page.status).toBe(429);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(Number(page.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.body).toContain('<h1>Too many attempts</h1>');
    expect(page.body).toMatch(/Too many failed sign-in attempts\. Try again in \d+ seconds?\./);
    expectThrottledToken(await passwordGrant(attacker, 'awong', 'x'));
    // The same user from their own address is unaffected.
    expect((await signInForm(freshAddress(), 'jsmith', seed.jsmith.password)).status).toBe(302);
    endWindows();
    expect((await signInForm(attacker, 'jsmith', seed.jsmith.password)).status).toBe(302);
  });
});

describe('bursts', () => {
  // The same limits in a window no slow run outlasts (a burst's refusals wait for its first attempts to be checked), so
  // that the counts below are the ones each test made.
  let steady: TestServer;
  beforeAll(async () => {
    steady = await startTestServer({ throttlePolicy: { ...policy, perAddress: { ...policy.perAddress, windowSeconds: 600 }, perLogin: { ...policy.perLogin, windowSeconds: 600 } } });
  });
  afterAll(() => steady.close());

  const grant = (from: string, username: string, password: string) =>
    rawRequest(steady.baseUrl, 'POST', '/oauth/token', { 'content-type': 'application/x-www-form-urlencoded' }, new URLSearchParams({ grant_type: 'password', username, password }).toString(), from).then((r) => r.status);

  it('counts a burst of concurrent guesses before hashing, so no more than the limit are ever checked', async () => {
    const attacker = freshAddress();
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => grant(attacker, `burst-${i}`, 'wrong')));
    const checked = answers.filter((status) => status === 400).length;
    expect(checked).toBe(policy.perAddress.failures);
    expect(answers.filter((status) => status === 429)).toHaveLength(50 - checked);
  });

  it('lets a storm of right passwords through from one address, however many at once, and counts none of them', async () => {
    const from = freshAddress();
    const last = policy.perAddress.failures - 1;
    for (let i = 0; i < last; i++) expect(await grant(from, `nobody-${i}`, 'wrong')).toBe(400);
    // One point left at the address: the rest of the storm waits for it, and none is refused.
    const storm = await Promise.all(Array.from({ length: 40 }, () => grant(from, 'jsmith', seed.jsmith.password)));
    expect(storm).toEqual(Array(40).fill(200));
    // Still exactly one failure short of the limit.
    expect(await grant(from, `nobody-${last}`, 'wrong')).toBe(400);
    const refused = await Promise.all(Array.from({ length: 20 }, () => grant(from, 'jsmith', seed.jsmith.password)));
    expect(refused).toEqual(Array(20).fill(429));
  });
});

describe('the default policy', () => {
  it('allows ten failures per login, then answers 429 for the rest of a ten-minute window', async () => {
    const defaults = await startTestServer();
    try {
      const grant = (password: string) =>
        rawRequest(defaults.baseUrl, 'POST', '/oauth/token', { 'content-type': 'application/x-www-form-urlencoded' }, new URLSearchParams({ grant_type: 'password', username: 'awong', password }).toString());
      const statuses = await Promise.all(Array.from({ length: 10 }, (_, i) => grant(`wrong-${i}`).then((r) => r.status)));
      expect(statuses).toEqual(Array(10).fill(400));
      const refused = await grant(seed.awong.password);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(9 * 60);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(10 * 60);
    } finally {
      await defaults.close();
    }
  });
});

describe('second factor', () => {
  it('counts wrong codes like wrong passwords: past the limit even the right code is refused with 429', async () => {
    endWindows();
    const from = freshAddress();
    const page = await rawRequest(server.baseUrl, 'GET', '/users/sign_in', {}, undefined, from);
    const headers = { 'content-type': 'application/x-www-form-urlencoded', cookie: page.headers['set-cookie']![0]!.split(';')[0]! };
    const post = (fields: Record<string, string>) =>
      rawRequest(server.baseUrl, 'POST', '/users/sign_in', headers, new URLSearchParams({ _csrf: csrfOf(page.body), ...fields }).toString(), from);
    const passwordStep = await post({ login: seed.awong.username, password: seed.awong.password });
    expect(passwordStep.status).toBe(200);
    // The session starts with the right password; the code step continues it.
    headers.cookie += `; ${passwordStep.headers['set-cookie']!.find((c) => c.startsWith('tokenbell.sid='))!.split(';')[0]!}`;
    const right = currentCode(seed.awong.otp_secret, server.now());
    const wrong = right === '000000' ? '111111' : '000000';
    for (let i = 0; i < policy.perLogin.failures; i++) expect((await post({ otp_attempt: wrong })).status).toBe(401);
    const refused = await post({ otp_attempt: right });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });
});
