import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  API_ERROR,
  AUTHENTICATION_ERROR,
  createTokenbellClient,
  NETWORK_ERROR,
  NOT_FOUND_ERROR,
  PERMISSION_ERROR,
  TokenbellApiError,
  TokenbellAuthenticationError,
  TokenbellError,
  TokenbellNetworkError,
  TokenbellNotFoundError,
  TokenbellPermissionError,
  TokenbellValidationError,
  VALIDATION_ERROR,
} from '../src/index.js';
import { fakeFetch, jsonResponse } from './support.js';

const baseUrl = 'http://127.0.0.1:4010';
const user = {
  id: 1,
  username: 'jsmith',
  name: 'John Smith',
  email: 'jsmith@example.com',
  state: 'active',
  avatar_url: null,
  web_url: 'http://127.0.0.1:3000/jsmith',
  created_at: '2026-11-01T09:30:00.000Z',
  bio: '',
  two_factor_enabled: false,
  is_admin: false,
};
const events = {
  new_note: true,
  new_issue: true,
  reopen_issue: false,
  close_issue: false,
  reassign_issue: false,
  new_merge_request: true,
  reopen_merge_request: false,
  close_merge_request: false,
  reassign_merge_request: false,
  merge_merge_request: true,
  failed_pipeline: true,
  success_pipeline: false,
};

describe('authentication', () => {
  it('sends an access token as a bearer header', async () => {
    const { fetch, calls } = fakeFetch(jsonResponse(user));
    const client = createTokenbellClient({ baseUrl, auth: { accessToken: 'tba_1', via: 'header' }, fetch });
    await client.user.current();
    expect(calls[0]).toMatchObject({ method: 'GET', url: `${baseUrl}/api/v3/user` });
    expect(calls[0]?.headers.authorization).toBe('Bearer tba_1');
    expect(calls[0]?.headers['private-token']).toBeUndefined();
  });

  it('defaults an access token to the header', async () => {
    const { fetch, calls } = fakeFetch(jsonResponse(user));
    await createTokenbellClient({ baseUrl, auth: { accessToken: 'tba_1' }, fetch }).user.current();
    expect(calls[0]?.headers.authorization).toBe('Bearer tba_1');
  });

  it('sends an access token in the query, leaving method, headers and body intact', async () => {
    const { fetch, calls } = fakeFetch(jsonResponse({ level: 'watch' }));
    const client = createTokenbellClient({ baseUrl, auth: { accessToken: 'tba 1&x', via: 'query' }, fetch });
    await client.notificationSettings.group(7).update({ level: 'watch' });
    expect(calls[0]).toEqual({
      method: 'PUT',
      url: `${baseUrl}/api/v3/groups/7/notification_settings?access_token=tba+1%26x`,
      headers: { 'content-type': 'application/json' },
      body: '{"level":"watch"}',
    });
  });

  it('sends a personal access token as PRIVATE-TOKEN', async () => {
    const { fetch, calls } = fakeFetch(jsonResponse(user));
    await createTokenbellClient({ baseUrl, auth: { privateToken: 'glpat-x' }, fetch }).user.current();
    expect(calls[0]?.headers).toEqual({ 'private-token': 'glpat-x' });
    expect(calls[0]?.url).toBe(`${baseUrl}/api/v3/user`);
  });

  it('sends nothing without auth', async () => {
    const { fetch, calls } = fakeFetch(jsonResponse(user));
    await createTokenbellClient({ baseUrl, fetch }).user.current();
    expect(calls[0]?.headers).toEqual({});
  });

  it('switches credentials on an existing client with setAuth', async () => {
    const { fetch, calls } = fakeFetch(jsonResponse(user));
    const client = createTokenbellClient({ baseUrl, auth: { accessToken: 'old' }, fetch });
    await client.user.current();
    client.setAuth({ accessToken: 'new', via: 'header' });
    await client.user.current();
    client.setAuth({ accessToken: 'q', via: 'query' });
    await client.user.current();
    client.setAuth({ privateToken: 'pat' });
    await client.user.current();
    client.setAuth(null);
    await client.user.current();
    expect(calls.map((c) => [c.url, c.headers])).toEqual([
      [`${baseUrl}/api/v3/user`, { authorization: 'Bearer old' }],
      [`${baseUrl}/api/v3/user`, { authorization: 'Bearer new' }],
      [`${baseUrl}/api/v3/user?access_token=q`, {}],
      [`${baseUrl}/api/v3/user`, { 'private-token': 'pat' }],
      [`${baseUrl}/api/v3/user`, {}],
    ]);
  });

  it('applies the same auth to the raw client', async () => {
    const { fetch, calls } = fakeFetch(jsonResponse({ active: false }));
    const client = createTokenbellClient({ baseUrl, auth: { privateToken: 'pat' }, fetch });
    const { data } = await client.raw.GET('/api/v3/notification_settings');
    expect(data).toEqual({ active: false });
    expect(calls[0]?.headers['private-token']).toBe('pat');
  });
});

describe('resource helpers', () => {
  it('user.current answers the user', async () => {
    const { fetch } = fakeFetch(jsonResponse(user));
    await expect(createTokenbellClient({ baseUrl, fetch }).user.current()).resolves.toEqual(user);
  });

  it('global settings: GET, and PUT with a JSON body', async () => {
    const settings = { level: 'watch', notification_email: 'jsmith@example.com' };
    const { fetch, calls } = fakeFetch(jsonResponse(settings));
    const client = createTokenbellClient({ baseUrl, fetch, auth: { accessToken: 't' } });
    await expect(client.notificationSettings.global.get()).resolves.toEqual(settings);
    await expect(
      client.notificationSettings.global.update({ level: 'watch', notification_email: 'jsmith@example.com', new_note: true }),
    ).resolves.toEqual(settings);
    expect(calls).toEqual([
      { method: 'GET', url: `${baseUrl}/api/v3/notification_settings`, headers: { authorization: 'Bearer t' }, body: '' },
      {
        method: 'PUT',
        url: `${baseUrl}/api/v3/notification_settings`,
        headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
        body: '{"level":"watch","notification_email":"jsmith@example.com","new_note":true}',
      },
    ]);
  });

  it('group settings by id and by path', async () => {
    const { fetch, calls } = fakeFetch(jsonResponse({ level: 'custom', events }));
    const client = createTokenbellClient({ baseUrl, fetch });
    await expect(client.notificationSettings.group(42).get()).resolves.toEqual({ level: 'custom', events });
    await client.notificationSettings.group('acme/platform').update({ level: 'custom', new_note: true });
    expect(calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ['GET', `${baseUrl}/api/v3/groups/42/notification_settings`, ''],
      ['PUT', `${baseUrl}/api/v3/groups/acme%2Fplatform/notification_settings`, '{"level":"custom","new_note":true}'],
    ]);
  });

  it('URL-encodes project paths exactly once', async () => {
    const { fetch, calls } = fakeFetch(jsonResponse({ level: 'global' }));
    const client = createTokenbellClient({ baseUrl, fetch });
    await client.notificationSettings.project('acme/widgets').get();
    await client.notificationSettings.project('acme/sub group/wid?gets#1').update({ level: 'mention' });
    await client.notificationSettings.project(5).get();
    expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual([
      `GET ${baseUrl}/api/v3/projects/acme%2Fwidgets/notification_settings`,
      `PUT ${baseUrl}/api/v3/projects/acme%2Fsub%20group%2Fwid%3Fgets%231/notification_settings`,
      `GET ${baseUrl}/api/v3/projects/5/notification_settings`,
    ]);
  });

  it('keeps a base URL path prefix and drops its trailing slash', async () => {
    const { fetch, calls } = fakeFetch(jsonResponse(user));
    await createTokenbellClient({ baseUrl: 'https://example.com/tokenbell/', fetch }).user.current();
    expect(calls[0]?.url).toBe('https://example.com/tokenbell/api/v3/user');
  });
});

describe('errors', () => {
  const cases = [
    [400, TokenbellValidationError, VALIDATION_ERROR, '400 Bad request - level does not have a valid value'],
    [401, TokenbellAuthenticationError, AUTHENTICATION_ERROR, '401 Unauthorized'],
    [403, TokenbellPermissionError, PERMISSION_ERROR, '403 Forbidden - insufficient scope'],
    [404, TokenbellNotFoundError, NOT_FOUND_ERROR, '404 Project Not Found'],
    [500, TokenbellApiError, API_ERROR, '500 Internal Server Error'],
  ] as const;

  it.each(cases)('HTTP %i throws %o with the body message', async (status, Class, code, message) => {
    const body = { message };
    const { fetch } = fakeFetch(jsonResponse(body, status, { 'WWW-Authenticate': 'Bearer realm="tokenbell"' }));
    const error = await createTokenbellClient({ baseUrl, fetch })
      .notificationSettings.project('acme/widgets')
      .get()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Class);
    expect(error).toBeInstanceOf(TokenbellApiError);
    expect(error).toBeInstanceOf(TokenbellError);
    expect(error).toBeInstanceOf(Error);
    const apiError = error as TokenbellApiError;
    expect(apiError).toMatchObject({ status, code, message, body, name: Class.name });
    expect(apiError.response.headers.get('www-authenticate')).toBe('Bearer realm="tokenbell"');
  });

  it('prints as its name, status, message and request, without the response or the query', async () => {
    const { fetch } = fakeFetch(jsonResponse({ message: '404 Project Not Found' }, 404, { 'X-Request-Header-Noise': 'x'.repeat(50) }));
    const error = await createTokenbellClient({ baseUrl, fetch, auth: { accessToken: 'secret-access-token', via: 'query' } })
      .notificationSettings.project('acme/widgets')
      .get()
      .catch((e: unknown) => e);
    const printed = inspect(error);
    expect(printed).toMatch(/^TokenbellNotFoundError: 404 Project Not Found\n/);
    expect(printed).toContain("status: 404");
    expect(printed).toContain(`request: 'GET ${baseUrl}/api/v3/projects/acme%2Fwidgets/notification_settings'`);
    expect(printed).not.toContain('Response');
    expect(printed).not.toContain('X-Request-Header-Noise'.toLowerCase());
    expect(printed).not.toContain('secret-access-token');
    // Still there for code that wants the headers.
    expect((error as TokenbellApiError).response.status).toBe(404);
  });

  it('subclasses are distinct', async () => {
    const { fetch } = fakeFetch(jsonResponse({ message: '401 Unauthorized' }, 401));
    const error = await createTokenbellClient({ baseUrl, fetch }).user.current().catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(TokenbellPermissionError);
    expect(error).not.toBeInstanceOf(TokenbellNetworkError);
  });

  it('falls back to the status for a body without a message', async () => {
    const { fetch } = fakeFetch(
      new Response('<html><body>Bad gateway</body></html>', { status: 502, statusText: 'Bad Gateway' }),
      new Response(null, { status: 401 }),
      new Response('upstream timed out', { status: 504 }),
    );
    const client = createTokenbellClient({ baseUrl, fetch });
    await expect(client.user.current()).rejects.toMatchObject({
      status: 502,
      message: '502 Bad Gateway',
      body: '<html><body>Bad gateway</body></html>',
    });
    const empty = await client.user.current().catch((e: unknown) => e);
    expect(empty).toBeInstanceOf(TokenbellAuthenticationError);
    expect(empty).toMatchObject({ status: 401, body: undefined });
    await expect(client.user.current()).rejects.toMatchObject({ status: 504, message: '504 upstream timed out' });
  });

  it('a 2xx that is not JSON throws TokenbellApiError with the text and the cause', async () => {
    const { fetch } = fakeFetch(new Response('<html>', { status: 200 }));
    const error = (await createTokenbellClient({ baseUrl, fetch }).user.current().catch((e: unknown) => e)) as TokenbellApiError;
    expect(error).toBeInstanceOf(TokenbellApiError);
    expect(error).toMatchObject({ status: 200, code: API_ERROR, body: '<html>' });
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it('a network failure throws TokenbellNetworkError with the cause, without the token', async () => {
    const failure = new TypeError('fetch failed');
    const { fetch } = fakeFetch(failure);
    const client = createTokenbellClient({ baseUrl, fetch, auth: { accessToken: 'secret-token', via: 'query' } });
    const error = (await client.notificationSettings.global.get().catch((e: unknown) => e)) as TokenbellNetworkError;
    expect(error).toBeInstanceOf(TokenbellNetworkError);
    expect(error).toBeInstanceOf(TokenbellError);
    expect(error).not.toBeInstanceOf(TokenbellApiError);
    expect(error.code).toBe(NETWORK_ERROR);
    expect(error.cause).toBe(failure);
    expect(error.message).toContain(`GET ${baseUrl}/api/v3/notification_settings`);
    expect(error.message).not.toContain('secret-token');
  });

  it('the raw client throws network failures too', async () => {
    const { fetch } = fakeFetch(new TypeError('fetch failed'));
    await expect(createTokenbellClient({ baseUrl, fetch }).raw.GET('/api/v3/user')).rejects.toBeInstanceOf(TokenbellNetworkError);
  });

  it('a real connection failure is a TokenbellNetworkError', async () => {
    // Port 9 (discard) on loopback is closed on any sane machine, so this fails fast.
    const client = createTokenbellClient({ baseUrl: 'http://127.0.0.1:9' });
    await expect(client.user.current()).rejects.toBeInstanceOf(TokenbellNetworkError);
  });

  it("names a refused connection in its message, not fetch's \"fetch failed\"", async () => {
    const { createServer } = await import('node:net');
    // A port that was free a moment ago: nothing listens there now.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise((resolve) => probe.close(resolve));
    const error = (await createTokenbellClient({ baseUrl: `http://127.0.0.1:${port}` }).user.current().catch((e: unknown) => e)) as TokenbellNetworkError;
    expect(error.message).toBe(`GET http://127.0.0.1:${port}/api/v3/user failed: connect ECONNREFUSED 127.0.0.1:${port}`);
  });
});
