// The device flow helpers (src/device.ts) against a real tokenbell (startTokenbell, in this process on a loopback
// port): the polls wait by moving the instance's clock instead of the machine's, so a flow of minutes takes
// milliseconds, and what the helpers do about each answer (authorization_pending, slow_down, access_denied,
// expired_token) meets the server's real answers.
import { startTokenbell, type RunningTokenbell } from '@tokenbell/server/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OAuthError, pollDeviceToken, startDeviceAuthorization, TokenbellNetworkError } from '../src/index.js';

const cli = { clientId: 'device-cli' };
const confidential = { clientId: 'device-app', clientSecret: 'device-app-secret-0123456789' };

let tokenbell: RunningTokenbell;
beforeAll(async () => {
  tokenbell = await startTokenbell({
    seed: {
      users: [{ username: 'alice', email: 'alice@example.com', name: 'Alice', password: 'alice-password-long' }],
      applications: [
        { name: 'Device CLI', owner: 'alice', client_id: cli.clientId, redirect_uris: ['http://127.0.0.1/unused'], scopes: ['api', 'read_user'], confidential: false },
        { name: 'Device App', owner: 'alice', client_id: confidential.clientId, client_secret: confidential.clientSecret, redirect_uris: ['http://127.0.0.1/unused'], scopes: ['read_user'] },
      ],
    },
  });
});
beforeEach(() => tokenbell.helpers.reset());
afterAll(() => tokenbell?.close());

/**
 * A `wait` that moves tokenbell's clock by what it was asked to wait, notes it, and then runs the step the test has
 * for that wait (the user answering meanwhile, say).
 */
function clockWait(steps: Record<number, () => Promise<unknown>> = {}) {
  const waits: number[] = [];
  const wait = async (seconds: number) => {
    waits.push(seconds);
    await tokenbell.helpers.advanceClock(seconds);
    await steps[waits.length]?.();
  };
  return { waits, wait };
}

const me = async (accessToken: string) => (await fetch(`${tokenbell.url}/api/v4/user`, { headers: { authorization: `Bearer ${accessToken}` } })).json();

describe('startDeviceAuthorization', () => {
  it('answers the codes for a public client, and for a confidential one with its secret', async () => {
    const started = await startDeviceAuthorization({ baseUrl: tokenbell.url, ...cli, scope: ['read_user'] });
    expect(started).toEqual({
      device_code: expect.any(String),
      user_code: expect.stringMatching(/^[0-9A-Z]{8}$/),
      verification_uri: `${tokenbell.url}/oauth/device`,
      verification_uri_complete: `${tokenbell.url}/oauth/device?user_code=${started.user_code}`,
      expires_in: 300,
      interval: 5,
    });
    await expect(startDeviceAuthorization({ baseUrl: tokenbell.url, ...confidential })).resolves.toMatchObject({ interval: 5 });
  });

  it('throws the endpoint\'s OAuth error: a confidential client without its secret, a scope beyond the application\'s', async () => {
    await expect(startDeviceAuthorization({ baseUrl: tokenbell.url, clientId: confidential.clientId })).rejects.toMatchObject({ error: 'invalid_client', status: 401 });
    const refused = await startDeviceAuthorization({ baseUrl: tokenbell.url, ...confidential, scope: 'api' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OAuthError);
    expect(refused).toMatchObject({ error: 'invalid_scope', status: 400, request: `POST ${tokenbell.url}/oauth/authorize_device` });
  });
});

describe('pollDeviceToken', () => {
  it('waits the interval before each poll and resolves with the tokens once the user approves', async () => {
    const started = await startDeviceAuthorization({ baseUrl: tokenbell.url, ...cli });
    const { waits, wait } = clockWait({ 2: () => tokenbell.helpers.decideDeviceAuthorization({ user_code: started.user_code, username: 'alice', decision: 'approve' }) });
    const tokens = await pollDeviceToken({ baseUrl: tokenbell.url, ...cli, deviceCode: started.device_code, interval: started.interval, expiresIn: started.expires_in, wait });
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'api read_user', refresh_token: expect.any(String) });
    // Pending after the first wait; approved during the second.
    expect(waits).toEqual([5, 5]);
    expect(await me(tokens.access_token)).toMatchObject({ username: 'alice' });
  });

  it('takes the test helpers\' advanceClock as its wait, as it is: both count in seconds', async () => {
    const started = await startDeviceAuthorization({ baseUrl: tokenbell.url, ...cli });
    await tokenbell.helpers.decideDeviceAuthorization({ user_code: started.user_code, username: 'alice', decision: 'approve' });
    const before = (await tokenbell.helpers.clock()).offset_seconds;
    const tokens = await pollDeviceToken({ baseUrl: tokenbell.url, ...cli, deviceCode: started.device_code, interval: started.interval, wait: tokenbell.helpers.advanceClock });
    expect(await me(tokens.access_token)).toMatchObject({ username: 'alice' });
    expect((await tokenbell.helpers.clock()).offset_seconds - before).toBe(started.interval);
  });

  it('adds 5 seconds to the interval at every slow_down, as RFC 8628 section 3.5 says', async () => {
    const started = await startDeviceAuthorization({ baseUrl: tokenbell.url, ...cli });
    const approve = () => tokenbell.helpers.decideDeviceAuthorization({ user_code: started.user_code, username: 'alice', decision: 'approve' });
    const { waits, wait } = clockWait({ 4: approve });
    // A device that polls every second where the server asks for five: pending, slow_down, then every 6 seconds.
    const tokens = await pollDeviceToken({ baseUrl: tokenbell.url, ...cli, deviceCode: started.device_code, interval: 1, wait });
    expect(waits).toEqual([1, 1, 6, 6]);
    expect(tokens.access_token).toEqual(expect.any(String));
  });

  it('throws access_denied when the user denies', async () => {
    const started = await startDeviceAuthorization({ baseUrl: tokenbell.url, ...confidential });
    const { wait } = clockWait({ 1: () => tokenbell.helpers.decideDeviceAuthorization({ user_code: started.user_code, username: 'alice', decision: 'deny' }) });
    const denied = await pollDeviceToken({ baseUrl: tokenbell.url, ...confidential, deviceCode: started.device_code, interval: started.interval, wait }).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(OAuthError);
    expect(denied).toMatchObject({ error: 'access_denied', status: 400 });
  });

  it('throws expired_token when the server says the code expired, and stops by itself at expires_in', async () => {
    const started = await startDeviceAuthorization({ baseUrl: tokenbell.url, ...cli });
    const late = clockWait({ 1: () => tokenbell.helpers.advanceClock(started.expires_in) });
    await expect(pollDeviceToken({ baseUrl: tokenbell.url, ...cli, deviceCode: started.device_code, interval: started.interval, wait: late.wait })).rejects.toMatchObject({
      error: 'expired_token',
      status: 400,
    });

    const unanswered = await startDeviceAuthorization({ baseUrl: tokenbell.url, ...cli });
    const { waits, wait } = clockWait();
    const stopped = await pollDeviceToken({ baseUrl: tokenbell.url, ...cli, deviceCode: unanswered.device_code, interval: 5, expiresIn: 12, wait }).catch((e: unknown) => e);
    expect(stopped).toBeInstanceOf(OAuthError);
    // Two polls, pending both times; a third wait would end past expires_in, so it stops without it.
    expect(stopped).toMatchObject({ error: 'expired_token', status: undefined });
    expect(waits).toEqual([5, 5]);
  });

  it('throws invalid_grant for a code that is not the client\'s, without polling again', async () => {
    const started = await startDeviceAuthorization({ baseUrl: tokenbell.url, ...cli });
    const { waits, wait } = clockWait();
    await expect(pollDeviceToken({ baseUrl: tokenbell.url, ...confidential, deviceCode: started.device_code, interval: 5, wait })).rejects.toMatchObject({ error: 'invalid_grant' });
    expect(waits).toEqual([5]);
  });

  it('waits on a real timer by default: with automatic approval the first poll gets the tokens', async () => {
    await tokenbell.helpers.setAutoApproval('alice');
    const started = await startDeviceAuthorization({ baseUrl: tokenbell.url, ...cli });
    const before = performance.now();
    // An interval shorter than the server's, so that the test does not wait five seconds; the first poll is never early.
    const tokens = await pollDeviceToken({ baseUrl: tokenbell.url, ...cli, deviceCode: started.device_code, interval: 0.2 });
    expect(performance.now() - before).toBeGreaterThanOrEqual(190);
    expect(await me(tokens.access_token)).toMatchObject({ username: 'alice' });
  });

  it('stops when aborted, during a wait or a request, with the signal\'s reason', async () => {
    const started = await startDeviceAuthorization({ baseUrl: tokenbell.url, ...cli });
    const controller = new AbortController();
    const stopping = pollDeviceToken({ baseUrl: tokenbell.url, ...cli, deviceCode: started.device_code, interval: 60, signal: controller.signal });
    controller.abort(new Error('the user pressed Ctrl-C'));
    await expect(stopping).rejects.toThrow('the user pressed Ctrl-C');

    const during = new AbortController();
    const hanging = (request: Request) => {
      during.abort(new Error('gave up'));
      return fetch(request);
    };
    await expect(
      pollDeviceToken({ baseUrl: tokenbell.url, fetch: hanging, ...cli, deviceCode: started.device_code, interval: 0.01, signal: during.signal }),
    ).rejects.toThrow('gave up');
    // Without a signal, a failed request is the network error it is.
    const unreachable = pollDeviceToken({ baseUrl: 'http://127.0.0.1:1', ...cli, deviceCode: started.device_code, interval: 0.01 });
    await expect(unreachable).rejects.toBeInstanceOf(TokenbellNetworkError);
  });
});
