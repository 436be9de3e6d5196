// The device authorization grant (RFC 8628) over real HTTP: the device authorization endpoint, the device's polls of
// the token endpoint (every answer of section 3.5, on the server's clock), and the verification pages a signed-in user
// answers on, with their CSRF check and the throttle of wrong codes.
import type { components } from '@tokenbell/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerApplication } from '../../src/domain/applications.js';
import { limits } from '../../src/config.js';
import type { ApplicationRecord } from '../../src/domain/storage/records.js';
import { Agent, answerDeviceCode, csrfOf, signIn } from '../support/agent.js';
import { form, json, seed, startTestServer, type TestServer } from '../support/server.js';

const deviceGrant = 'urn:ietf:params:oauth:grant-type:device_code';

type DeviceAuthorization = components['schemas']['DeviceAuthorizationResponse'];

let server: TestServer;
/** A public client (a CLI), registered by jsmith: client_id alone. */
let cli: ApplicationRecord;
let jsmith: Agent;

beforeAll(async () => {
  server = await startTestServer();
  const owner = (await server.storage.users.byUsername('jsmith'))!;
  ({ record: cli } = await registerApplication(server.storage, owner.id, { name: 'Example CLI', redirect_uris: ['http://127.0.0.1/unused'], scopes: ['api', 'read_user'], confidential: false }));
  jsmith = new Agent(server.baseUrl);
  expect((await signIn(jsmith, seed.jsmith.username, seed.jsmith.password)).status).toBe(302);
});
afterAll(() => server.close());

const post = (path: string, params: Record<string, string>, headers: Record<string, string> = {}) => {
  const init = form(params);
  return fetch(`${server.baseUrl}${path}`, { ...init, headers: { ...init.headers, ...headers } });
};
const body = async (response: Response) => (await response.json()) as Record<string, unknown>;

async function startDevice(params: Record<string, string> = { client_id: cli.uid }): Promise<DeviceAuthorization> {
  const response = await post('/oauth/authorize_device', params);
  expect(response.status, JSON.stringify(await response.clone().json())).toBe(200);
  return (await response.json()) as DeviceAuthorization;
}
const poll = (deviceCode: string, client: Record<string, string> = { client_id: cli.uid }) => post('/oauth/token', { grant_type: deviceGrant, device_code: deviceCode, ...client });
/** A poll's status and OAuth error (or null for a token response). */
async function polled(deviceCode: string, client?: Record<string, string>) {
  const response = await poll(deviceCode, client);
  const answer = await body(response);
  return { status: response.status, error: (answer.error as string | undefined) ?? null, answer, cacheControl: response.headers.get('cache-control') };
}

describe('the device authorization endpoint (RFC 8628 section 3.1-3.2)', () => {
  it('answers a public client by its client_id alone: a device code, an 8-character user code, the page and the timing', async () => {
    const response = await post('/oauth/authorize_device', { client_id: cli.uid });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const answer = (await response.json()) as DeviceAuthorization;
    expect(answer).toEqual({
      device_code: expect.stringMatching(/^tbdc_[0-9A-Za-z]{43}$/),
      user_code: expect.stringMatching(/^[0-9A-Z]{8}$/),
      verification_uri: `${server.baseUrl}/oauth/device`,
      verification_uri_complete: `${server.baseUrl}/oauth/device?user_code=${answer.user_code}`,
      expires_in: 300,
      interval: 5,
    });
    // Both codes are kept as digests only.
    const dump = await server.dump();
    expect(dump).not.toContain(answer.device_code);
    expect(dump).not.toContain(answer.user_code);
  });

  it('takes JSON too, and narrows the scope within the application\'s', async () => {
    const response = await fetch(`${server.baseUrl}/oauth/authorize_device`, json('POST', { client_id: cli.uid, scope: 'read_user' }));
    expect(response.status).toBe(200);
    const { user_code } = (await response.json()) as DeviceAuthorization;
    const confirm = await jsmith.post('/oauth/device/confirm', { _csrf: csrfOf(await (await jsmith.get('/oauth/device')).text()), user_code });
    const page = await confirm.text();
    expect(page).toContain('<code>read_user</code>');
    expect(page).not.toContain('<code>api</code>');
  });

  it('refuses a scope the application lacks, or an unknown one, with invalid_scope', async () => {
    for (const scope of ['openid', 'sudo']) {
      const response = await post('/oauth/authorize_device', { client_id: cli.uid, scope });
      expect(response.status).toBe(400);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(await body(response)).toMatchObject({ error: 'invalid_scope' });
    }
  });

  it('answers invalid_client without a client, for an unknown one, and for a confidential one without its secret or with a wrong one', async () => {
    const attempts: Array<[Record<string, string>, Record<string, string>]> = [
      [{}, {}],
      [{ client_id: 'no-such-client' }, {}],
      [{ client_id: seed.client.id }, {}],
      [{ client_id: seed.client.id, client_secret: 'tbcs_wrong' }, {}],
      [{}, { authorization: `Basic ${Buffer.from(`${seed.client.id}:tbcs_wrong`).toString('base64')}` }],
    ];
    for (const [params, headers] of attempts) {
      const response = await post('/oauth/authorize_device', params, headers);
      expect(response.status, JSON.stringify(params)).toBe(401);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(await body(response)).toMatchObject({ error: 'invalid_client' });
    }
  });

  it('authenticates a confidential client by its secret in the body or with HTTP Basic', async () => {
    await startDevice({ client_id: seed.client.id, client_secret: seed.client.secret });
    const basic = await post('/oauth/authorize_device', {}, { authorization: `Basic ${Buffer.from(`${seed.client.id}:${seed.client.secret}`).toString('base64')}` });
    expect(basic.status).toBe(200);
  });

  it('answers any origin, as the token endpoint does, and is named in the server metadata with its grant', async () => {
    const preflight = await fetch(`${server.baseUrl}/oauth/authorize_device`, { method: 'OPTIONS', headers: { origin: 'https://cli.example', 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    const response = await post('/oauth/authorize_device', { client_id: cli.uid }, { origin: 'https://cli.example' });
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const metadata = await body(await fetch(`${server.baseUrl}/.well-known/oauth-authorization-server`));
    expect(metadata.device_authorization_endpoint).toBe(`${server.baseUrl}/oauth/authorize_device`);
    expect(metadata.grant_types_supported).toContain(deviceGrant);
  });
});

describe('polling the token endpoint (RFC 8628 section 3.4-3.5)', () => {
  it('is authorization_pending until the user answers, then the token response once, then invalid_grant', async () => {
    const device = await startDevice();
    expect(await polled(device.device_code)).toMatchObject({ status: 400, error: 'authorization_pending', cacheControl: 'no-store' });
    server.advance(device.interval);
    expect((await answerDeviceCode(jsmith, device.user_code, 'approve')).status).toBe(200);

    const issued = await polled(device.device_code);
    expect(issued).toMatchObject({ status: 200, error: null, cacheControl: 'no-store' });
    expect(issued.answer).toMatchObject({ token_type: 'bearer', scope: 'api read_user', expires_in: 7200, refresh_token: expect.any(String) });
    const me = await fetch(`${server.baseUrl}/api/v3/user`, { headers: { authorization: `Bearer ${issued.answer.access_token as string}` } });
    expect(await body(me)).toMatchObject({ username: 'jsmith' });

    server.advance(device.interval);
    expect(await polled(device.device_code)).toMatchObject({ status: 400, error: 'invalid_grant' });
    // The refresh token is an ordinary one of the application's.
    const refreshed = await post('/oauth/token', { grant_type: 'refresh_token', refresh_token: issued.answer.refresh_token as string, client_id: cli.uid });
    expect(refreshed.status).toBe(200);
  });

  it('is slow_down for a poll sooner than the interval, and a refused poll does not restart the wait', async () => {
    const device = await startDevice();
    expect((await polled(device.device_code)).error).toBe('authorization_pending');
    expect((await polled(device.device_code)).error).toBe('slow_down');
    server.advance(3);
    expect((await polled(device.device_code)).error).toBe('slow_down');
    // Five seconds after the last poll told to wait, not after the refused one three seconds ago.
    server.advance(2);
    expect((await polled(device.device_code)).error).toBe('authorization_pending');
    expect((await polled(device.device_code)).error).toBe('slow_down');
  });

  it('is access_denied after Deny, at every poll', async () => {
    const device = await startDevice();
    const denied = await answerDeviceCode(jsmith, device.user_code, 'deny');
    expect(denied.status).toBe(200);
    expect(await denied.text()).toContain('Device denied');
    expect(await polled(device.device_code)).toMatchObject({ status: 400, error: 'access_denied' });
    expect(await polled(device.device_code)).toMatchObject({ status: 400, error: 'access_denied' });
  });

  it('is expired_token once expires_in has passed on the server\'s clock, answered or not', async () => {
    const pending = await startDevice();
    const approved = await startDevice();
    expect((await answerDeviceCode(jsmith, approved.user_code, 'approve')).status).toBe(200);
    server.advance(pending.expires_in);
    expect(await polled(pending.device_code)).toMatchObject({ status: 400, error: 'expired_token' });
    expect(await polled(approved.device_code)).toMatchObject({ status: 400, error: 'expired_token' });
  });

  it('is invalid_grant for an unknown code and for another client\'s, which burns nothing', async () => {
    const device = await startDevice();
    expect((await answerDeviceCode(jsmith, device.user_code, 'approve')).status).toBe(200);
    expect(await polled('tbdc_not-a-code-this-server-issued')).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect(await polled(device.device_code, { client_id: seed.client.id, client_secret: seed.client.secret })).toMatchObject({ status: 400, error: 'invalid_grant' });
    expect((await polled(device.device_code)).status).toBe(200);
  });

  it('is invalid_request without a device_code', async () => {
    const response = await post('/oauth/token', { grant_type: deviceGrant, client_id: cli.uid });
    expect(response.status).toBe(400);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await body(response)).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('device_code') });
  });

  it('needs a confidential client\'s secret, as the code grant does', async () => {
    const device = await startDevice({ client_id: seed.client.id, client_secret: seed.client.secret });
    expect((await answerDeviceCode(jsmith, device.user_code, 'approve')).status).toBe(200);
    expect(await polled(device.device_code, { client_id: seed.client.id })).toMatchObject({ status: 401, error: 'invalid_client' });
    expect(await polled(device.device_code, { client_id: seed.client.id, client_secret: seed.client.secret })).toMatchObject({ status: 200 });
  });

  it('is served whatever the password grant setting', async () => {
    const off = await startTestServer({ passwordGrant: 'off' });
    try {
      const owner = (await off.storage.users.byUsername('jsmith'))!;
      const { record } = await registerApplication(off.storage, owner.id, { name: 'CLI', redirect_uris: ['http://127.0.0.1/unused'], confidential: false });
      const response = await fetch(`${off.baseUrl}/oauth/token`, form({ grant_type: deviceGrant, device_code: 'tbdc_unknown', client_id: record.uid }));
      expect(await body(response)).toMatchObject({ error: 'invalid_grant' });
      const metadata = await body(await fetch(`${off.baseUrl}/.well-known/oauth-authorization-server`));
      expect(metadata.grant_types_supported).toEqual(['authorization_code', 'refresh_token', deviceGrant]);
    } finally {
      await off.close();
    }
  });

  it('issues tokens that show on the user\'s authorized applications, where revoking them ends them', async () => {
    const device = await startDevice();
    expect((await answerDeviceCode(jsmith, device.user_code, 'approve')).status).toBe(200);
    const { answer } = await polled(device.device_code);
    const page = await (await jsmith.get('/profile/applications')).text();
    const authorized = /<h2 id="authorized-applications">[\s\S]*?<\/section>/.exec(page)![0];
    expect(authorized).toContain('Example CLI');
    const revoke = await jsmith.post(`/profile/authorized_applications/${cli.id}/revoke`, { _csrf: csrfOf(page) });
    expect(revoke.status).toBe(302);
    const me = await fetch(`${server.baseUrl}/api/v3/user`, { headers: { authorization: `Bearer ${answer.access_token as string}` } });
    expect(me.status).toBe(401);
  });

  it('serves a command-line tool registered on the applications page without a redirect URI, which no browser flow may use', async () => {
    const page = await (await jsmith.get('/profile/applications')).text();
    expect(page).toContain('Leave it empty for a command-line tool that signs in with the device flow.');
    const created = await jsmith.post('/profile/applications', { _csrf: csrfOf(page), name: 'Form CLI', redirect_uri: '', scopes: ['read_user'], confidential: 'false' });
    expect(created.status).toBe(201);
    const registered = (await server.storage.applications.ownedBy((await server.storage.users.byUsername('jsmith'))!.id)).find((a) => a.name === 'Form CLI')!;
    expect(registered.redirect_uris).toEqual([]);
    expect(await created.text()).toContain(registered.uid);
    const device = await startDevice({ client_id: registered.uid });
    expect((await answerDeviceCode(jsmith, device.user_code, 'approve')).status).toBe(200);
    expect(await polled(device.device_code, { client_id: registered.uid })).toMatchObject({ status: 200, error: null });
    const browser = await jsmith.get(`/oauth/authorize?client_id=${registered.uid}&redirect_uri=${encodeURIComponent('http://127.0.0.1/cb')}&response_type=code&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`);
    expect(browser.status).toBe(400);
  });

  it('gives no tokens to a device approved before the user revoked the application', async () => {
    const device = await startDevice();
    expect((await answerDeviceCode(jsmith, device.user_code, 'approve')).status).toBe(200);
    const page = await (await jsmith.get('/profile/applications')).text();
    expect((await jsmith.post(`/profile/authorized_applications/${cli.id}/revoke`, { _csrf: csrfOf(page) })).status).toBe(302);
    expect(await polled(device.device_code)).toMatchObject({ status: 400, error: 'invalid_grant' });
  });
});

describe('the verification pages (RFC 8628 section 3.3)', () => {
  it('send a visitor who is not signed in to sign in and back to the form, the code kept and filled in', async () => {
    const device = await startDevice();
    const agent = new Agent(server.baseUrl);
    const first = await agent.get(`/oauth/device?user_code=${device.user_code}`);
    expect(first.status).toBe(302);
    const signInUrl = new URL(first.headers.get('location')!, server.baseUrl);
    expect(signInUrl.pathname).toBe('/users/sign_in');
    expect(signInUrl.searchParams.get('return_to')).toBe(`/oauth/device?user_code=${device.user_code}`);
    const signInPage = await (await agent.get(signInUrl.pathname + signInUrl.search)).text();
    const returnTo = signInUrl.searchParams.get('return_to')!;
    const signedIn = await agent.post('/users/sign_in', { _csrf: csrfOf(signInPage), login: 'mallory', password: seed.mallory.password, return_to: returnTo });
    expect(signedIn.status).toBe(302);
    expect(signedIn.headers.get('location')).toBe(returnTo);
    const page = await (await agent.get(returnTo)).text();
    expect(page).toContain(`value="${device.user_code.slice(0, 4)}-${device.user_code.slice(4)}"`);
    expect(page).toContain('<label for="user_code">Code</label>');
  });

  it('ignore case, spaces and hyphens in the code, and name the application, the account and the scopes', async () => {
    const device = await startDevice();
    const typed = ` ${device.user_code.slice(0, 4).toLowerCase()} - ${device.user_code.slice(4)} `;
    const page = await (await jsmith.get('/oauth/device')).text();
    const confirm = await jsmith.post('/oauth/device/confirm', { _csrf: csrfOf(page), user_code: typed });
    expect(confirm.status).toBe(200);
    const text = await confirm.text();
    expect(text).toContain('<h1>Authorize Example CLI to use your account?</h1>');
    expect(text).toContain('<strong>jsmith</strong>');
    expect(text).toContain('<code>api</code>: Grants complete read/write access to the API, including all groups and projects');
    expect(text).toContain(`<code>${device.user_code.slice(0, 4)}-${device.user_code.slice(4)}</code>`);
    expect(text).toMatch(/<button type="submit" name="decision" value="deny" class="secondary">Deny<\/button>/);
  });

  it('say so for an unknown, an expired and an answered code, and show the form again', async () => {
    const page = await (await jsmith.get('/oauth/device')).text();
    const tryCode = async (userCode: string) => {
      const response = await jsmith.post('/oauth/device/confirm', { _csrf: csrfOf(page), user_code: userCode });
      const text = await response.text();
      expect(text).toContain('action="/oauth/device/confirm"');
      return { status: response.status, text };
    };
    expect(await tryCode('ZZZZ-ZZZZ')).toMatchObject({ status: 400, text: expect.stringContaining('No device is waiting for this code.') });
    const answered = await startDevice();
    expect((await answerDeviceCode(jsmith, answered.user_code, 'deny')).status).toBe(200);
    expect(await tryCode(answered.user_code)).toMatchObject({ status: 400, text: expect.stringContaining('This code has been answered already.') });
    const decidedAgain = await jsmith.post('/oauth/device', { _csrf: csrfOf(page), user_code: answered.user_code, decision: 'approve' });
    expect(decidedAgain.status).toBe(400);
    expect(await polled(answered.device_code)).toMatchObject({ error: 'access_denied' });
    const expired = await startDevice();
    server.advance(expired.expires_in);
    expect(await tryCode(expired.user_code)).toMatchObject({ status: 400, text: expect.stringContaining('This code has expired.') });
  });

  it('refuse a decision with a forged CSRF token, and one without a session goes to sign in first', async () => {
    const device = await startDevice();
    const forged = await jsmith.post('/oauth/device', { _csrf: 'forged-token', user_code: device.user_code, decision: 'approve' });
    expect(forged.status).toBe(403);
    const anonymous = await new Agent(server.baseUrl).post('/oauth/device', { _csrf: 'none', user_code: device.user_code, decision: 'approve' });
    expect(anonymous.status).toBe(302);
    expect(new URL(anonymous.headers.get('location')!, server.baseUrl).searchParams.get('return_to')).toBe(`/oauth/device?user_code=${device.user_code}`);
    expect((await polled(device.device_code)).error).toBe('authorization_pending');
  });
});

describe('wrong codes', () => {
  it('are counted per account, apart from passwords: past the limit 429 with Retry-After, even for a right code', async () => {
    const limited = await startTestServer({ throttlePolicy: { ...limits.loginThrottle, perLogin: { failures: 3, windowSeconds: 600 } } });
    try {
      const owner = (await limited.storage.users.byUsername('jsmith'))!;
      const { record } = await registerApplication(limited.storage, owner.id, { name: 'CLI', redirect_uris: ['http://127.0.0.1/unused'], confidential: false });
      const device = (await (await fetch(`${limited.baseUrl}/oauth/authorize_device`, form({ client_id: record.uid }))).json()) as DeviceAuthorization;
      const agent = new Agent(limited.baseUrl);
      expect((await signIn(agent, 'jsmith', seed.jsmith.password)).status).toBe(302);
      const page = await (await agent.get('/oauth/device')).text();
      const confirm = (userCode: string) => agent.post('/oauth/device/confirm', { _csrf: csrfOf(page), user_code: userCode });
      for (const wrong of ['AAAA-AAAA', 'AAAA-AAAB', 'not a code']) expect((await confirm(wrong)).status).toBe(400);
      const refused = await confirm(device.user_code);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await refused.text()).toContain('Too many wrong device codes.');
      const decision = await agent.post('/oauth/device', { _csrf: csrfOf(page), user_code: device.user_code, decision: 'approve' });
      expect(decision.status).toBe(429);
      // Another account from the same address still gets in, and signing in is counted apart.
      const mallory = new Agent(limited.baseUrl);
      expect((await signIn(mallory, 'mallory', seed.mallory.password)).status).toBe(302);
      const theirs = await mallory.post('/oauth/device/confirm', { _csrf: csrfOf(await (await mallory.get('/oauth/device')).text()), user_code: device.user_code });
      expect(theirs.status).toBe(200);
    } finally {
      await limited.close();
    }
  });

  it('carried to the sign-in page are counted per address, so it names the device\'s application only within the limit', async () => {
    const limited = await startTestServer({ throttlePolicy: { ...limits.loginThrottle, perAddress: { failures: 3, windowSeconds: 600 } } });
    try {
      const owner = (await limited.storage.users.byUsername('jsmith'))!;
      const { record } = await registerApplication(limited.storage, owner.id, { name: 'Throttled CLI', redirect_uris: ['http://127.0.0.1/unused'], confidential: false });
      const device = (await (await fetch(`${limited.baseUrl}/oauth/authorize_device`, form({ client_id: record.uid }))).json()) as DeviceAuthorization;
      const signInPage = async (userCode: string) => (await fetch(`${limited.baseUrl}/users/sign_in?return_to=${encodeURIComponent(`/oauth/device?user_code=${userCode}`)}`)).text();
      const asking = '<strong>Throttled CLI</strong> is asking for access to your account.';
      expect(await signInPage(device.user_code)).toContain(asking);
      for (const wrong of ['AAAA-AAAA', 'AAAA-AAAB', 'AAAA-AAAC']) expect(await signInPage(wrong)).not.toContain('is asking for access');
      const past = await signInPage(device.user_code);
      expect(past).toContain('<h1>Sign in</h1>');
      expect(past).not.toContain(asking);
      // The same count as the code form's: a signed-in user at that address is past it too.
      const agent = new Agent(limited.baseUrl);
      expect((await signIn(agent, 'jsmith', seed.jsmith.password)).status).toBe(302);
      const confirmed = await agent.post('/oauth/device/confirm', { _csrf: csrfOf(await (await agent.get('/oauth/device')).text()), user_code: device.user_code });
      expect(confirmed.status).toBe(429);
    } finally {
      await limited.close();
    }
  });
});

describe('a flood of device authorizations', () => {
  const flood = async (baseUrl: string, clientId: string, count: number) => {
    const answers: Response[] = [];
    for (let i = 0; i < count; i++) answers.push(await fetch(`${baseUrl}/oauth/authorize_device`, form({ client_id: clientId })));
    return answers;
  };

  it('from one address is refused past its count with 429, Retry-After and invalid_request, storing nothing more', async () => {
    const limited = await startTestServer();
    try {
      const owner = (await limited.storage.users.byUsername('jsmith'))!;
      const { record } = await registerApplication(limited.storage, owner.id, { name: 'CLI', redirect_uris: ['http://127.0.0.1/unused'], confidential: false });
      const { requests } = limits.loginThrottle.deviceStartsPerAddress;
      const answers = await flood(limited.baseUrl, record.uid, requests + 10);
      expect(answers.map((a) => a.status)).toEqual([...Array<number>(requests).fill(200), ...Array<number>(10).fill(429)]);
      const refused = answers.at(-1)!;
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await refused.json()).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('Too many device authorizations from this address') });
      expect(await limited.storage.deviceGrants.pendingCount(record.id, limited.now())).toBe(requests);
      // A made-up client id counts too: the flood is refused before anything is looked up.
      expect((await fetch(`${limited.baseUrl}/oauth/authorize_device`, form({ client_id: 'no-such-client' }))).status).toBe(429);
    } finally {
      await limited.close();
    }
  });

  it('for one client is capped at the waiting ones it may have, whatever the addresses, and an answer makes room', async () => {
    const generous = await startTestServer({ throttlePolicy: { ...limits.loginThrottle, deviceStartsPerAddress: { requests: 1000, windowSeconds: 60 } } });
    try {
      const owner = (await generous.storage.users.byUsername('jsmith'))!;
      const { record } = await registerApplication(generous.storage, owner.id, { name: 'CLI', redirect_uris: ['http://127.0.0.1/unused'], confidential: false });
      const cap = limits.deviceAuthorization.pendingPerClient;
      const answers = await flood(generous.baseUrl, record.uid, cap + 1);
      expect(answers.slice(0, cap).every((a) => a.status === 200)).toBe(true);
      const refused = answers.at(-1)!;
      expect(refused.status).toBe(429);
      expect(await refused.json()).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('device authorizations waiting for an answer') });
      const first = (await answers[0]!.json()) as DeviceAuthorization;
      const agent = new Agent(generous.baseUrl);
      expect((await signIn(agent, 'jsmith', seed.jsmith.password)).status).toBe(302);
      expect((await answerDeviceCode(agent, first.user_code, 'deny')).status).toBe(200);
      expect((await flood(generous.baseUrl, record.uid, 1))[0]!.status).toBe(200);
    } finally {
      await generous.close();
    }
  });
});
