import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  authorizationUrl,
  calculateCodeChallenge,
  callbackParams,
  checkState,
  exchangeCode,
  generateCodeVerifier,
  generateState,
  OAUTH_ERROR,
  OAuthError,
  passwordGrant,
  refresh,
  revoke,
  TokenbellError,
  TokenbellNetworkError,
} from '../src/index.js';
import { fakeFetch, jsonResponse } from './support.js';

const baseUrl = 'http://127.0.0.1:4010';
const client = { clientId: '3hYq8v2Kx0cWmJ5tQz7rBn1LpD4sFgHa', clientSecret: 'tbcs_Wq5nR8vK2mXj7LpT4zYc9HbF3dGs6AeN' };
const tokens = {
  access_token: 'tba_Lk3mQ8vR2nTz7WcYb4JpD9sHg6AeU5oVqXf1',
  token_type: 'bearer',
  expires_in: 7200,
  refresh_token: 'tbr_9fKx2LmQ7vR4nTz8WcYb3JpD6sHg5AeU1oVq',
  scope: 'api',
  created_at: 1795427100,
};
const formHeaders = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
const unreserved = /^[A-Za-z0-9\-._~]+$/;

describe('PKCE and state', () => {
  it('matches the RFC 7636 Appendix B test vector', async () => {
    await expect(calculateCodeChallenge('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk')).resolves.toBe(
      'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    );
  });

  it('generates 43-character unreserved verifiers and states that differ', () => {
    const values = new Set(Array.from({ length: 50 }, () => [generateCodeVerifier(), generateState()]).flat());
    expect(values.size).toBe(100);
    for (const value of values) {
      expect(value).toHaveLength(43);
      expect(value).toMatch(unreserved);
    }
  });
});

describe('authorizationUrl', () => {
  it('builds the request with PKCE S256 and a generated state by default', async () => {
    const result = await authorizationUrl({
      baseUrl: `${baseUrl}/`,
      clientId: client.clientId,
      redirectUri: 'https://app.example.com/oauth/callback',
      scope: ['api', 'read_user'],
    });
    const url = new URL(result.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${baseUrl}/oauth/authorize`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: client.clientId,
      redirect_uri: 'https://app.example.com/oauth/callback',
      response_type: 'code',
      state: result.state,
      scope: 'api read_user',
      code_challenge: await calculateCodeChallenge(result.codeVerifier),
      code_challenge_method: 'S256',
    });
    expect(result.codeVerifier.length).toBeGreaterThanOrEqual(43);
    expect(result.codeVerifier).toMatch(unreserved);
    expect(result.state).toMatch(unreserved);
    expect(result.state.length).toBeGreaterThanOrEqual(43);
    // The verifier is the secret half: it must never travel in the front channel.
    expect(result.url).not.toContain(result.codeVerifier);
  });

  it('uses the given state, omits PKCE when disabled and omits an absent scope', async () => {
    const result = await authorizationUrl({
      baseUrl,
      clientId: 'app',
      redirectUri: 'http://localhost:8080/cb?x=1&y=2',
      state: 'af0ifjsldkj',
      pkce: false,
    });
    expect(result).toEqual({
      url: `${baseUrl}/oauth/authorize?client_id=app&redirect_uri=http%3A%2F%2Flocalhost%3A8080%2Fcb%3Fx%3D1%26y%3D2&response_type=code&state=af0ifjsldkj`,
      state: 'af0ifjsldkj',
    });
  });

  it('generates a fresh state and verifier per call', async () => {
    const options = { baseUrl, clientId: 'app', redirectUri: 'http://localhost/cb' };
    const [a, b] = await Promise.all([authorizationUrl(options), authorizationUrl(options)]);
    expect(a.state).not.toBe(b.state);
    expect(a.codeVerifier).not.toBe(b.codeVerifier);
  });
});

describe('checkState', () => {
  it('accepts equal values only', () => {
    expect(checkState('af0ifjsldkj', 'af0ifjsldkj')).toBe(true);
    expect(checkState('af0ifjsldkJ', 'af0ifjsldkj')).toBe(false);
    expect(checkState('af0ifjsldk', 'af0ifjsldkj')).toBe(false);
    expect(checkState('af0ifjsldkjx', 'af0ifjsldkj')).toBe(false);
    expect(checkState('é', 'e')).toBe(false);
    expect(checkState('\u0000', '')).toBe(false);
  });

  it('rejects missing values, even when both are missing', () => {
    expect(checkState(undefined, 'a')).toBe(false);
    expect(checkState(null, 'a')).toBe(false);
    expect(checkState('a', undefined)).toBe(false);
    expect(checkState('', '')).toBe(false);
    expect(checkState(null, null)).toBe(false);
    expect(checkState(undefined, undefined)).toBe(false);
  });
});

describe('callbackParams', () => {
  it('reads code and state from absolute and relative URLs and URLSearchParams', () => {
    expect(callbackParams('https://app.example.com/oauth/callback?code=Xb7k&state=af0')).toEqual({ code: 'Xb7k', state: 'af0' });
    expect(callbackParams('/oauth/callback?code=Xb7k')).toEqual({ code: 'Xb7k', state: undefined });
    expect(callbackParams(new URL('https://a.example/cb?state=s&code=c%2Bd'))).toEqual({ code: 'c+d', state: 's' });
    expect(callbackParams(new URLSearchParams('code=c&state=s'))).toEqual({ code: 'c', state: 's' });
  });

  it('throws OAuthError for an error redirect, with its description and state', () => {
    const error = (() => {
      try {
        callbackParams('https://app.example.com/cb?error=access_denied&error_description=The+user+denied&state=af0');
      } catch (e) {
        return e;
      }
    })() as OAuthError;
    expect(error).toBeInstanceOf(OAuthError);
    expect(error).toBeInstanceOf(TokenbellError);
    expect(error).toMatchObject({
      code: OAUTH_ERROR,
      error: 'access_denied',
      error_description: 'The user denied',
      state: 'af0',
      status: undefined,
      message: 'access_denied: The user denied',
    });
  });

  it('throws for a redirect with neither code nor error', () => {
    expect(() => callbackParams('https://app.example.com/cb?state=x')).toThrow(OAuthError);
  });
});

describe('token endpoint requests', () => {
  it('exchangeCode posts the authorization code grant as a form', async () => {
    const { fetch, calls } = fakeFetch(jsonResponse(tokens));
    const result = await exchangeCode({
      baseUrl,
      ...client,
      code: 'Xb7kq2V9mTn4RzL8wPcJ3sYd',
      redirectUri: 'https://app.example.com/oauth/callback',
      codeVerifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
      fetch,
    });
    expect(result).toEqual(tokens);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toEqual({
      method: 'POST',
      url: `${baseUrl}/oauth/token`,
      headers: formHeaders,
      body:
        'grant_type=authorization_code&code=Xb7kq2V9mTn4RzL8wPcJ3sYd' +
        '&redirect_uri=https%3A%2F%2Fapp.example.com%2Foauth%2Fcallback' +
        '&code_verifier=dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk' +
        `&client_id=${client.clientId}&client_secret=${client.clientSecret}`,
    });
  });

  it('exchangeCode without PKCE sends no code_verifier (never the string "undefined")', async () => {
    const { fetch, calls } = fakeFetch(jsonResponse(tokens));
    await exchangeCode({ baseUrl, ...client, code: 'c', redirectUri: 'http://localhost/cb', fetch });
    expect(Object.fromEntries(new URLSearchParams(calls[0]?.body))).toEqual({
      grant_type: 'authorization_code',
      code: 'c',
      redirect_uri: 'http://localhost/cb',
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
  });

  it('passwordGrant posts username and password, with client credentials only when given', async () => {
    const { refresh_token: _, ...passwordTokens } = tokens;
    const { fetch, calls } = fakeFetch(jsonResponse(passwordTokens));
    await expect(
      passwordGrant({ baseUrl, username: 'jsmith', password: 'correct horse&battery=staple', scope: 'api read_user', fetch }),
    ).resolves.toEqual(passwordTokens);
    await passwordGrant({ baseUrl, username: 'jsmith', password: 'pw', ...client, fetch });
    expect(calls[0]).toEqual({
      method: 'POST',
      url: `${baseUrl}/oauth/token`,
      headers: formHeaders,
      body: 'grant_type=password&username=jsmith&password=correct+horse%26battery%3Dstaple&scope=api+read_user',
    });
    expect(calls[1]?.body).toBe(
      `grant_type=password&username=jsmith&password=pw&client_id=${client.clientId}&client_secret=${client.clientSecret}`,
    );
  });

  it('refresh posts the refresh grant', async () => {
    const { fetch, calls } = fakeFetch(jsonResponse(tokens));
    await expect(refresh({ baseUrl, ...client, refreshToken: 'tbr_old', scope: ['read_api'], fetch })).resolves.toEqual(tokens);
    expect(calls[0]).toEqual({
      method: 'POST',
      url: `${baseUrl}/oauth/token`,
      headers: formHeaders,
      body: `grant_type=refresh_token&refresh_token=tbr_old&scope=read_api&client_id=${client.clientId}&client_secret=${client.clientSecret}`,
    });
  });

  it('revoke posts RFC 7009 parameters and ignores the body', async () => {
    const { fetch, calls } = fakeFetch(jsonResponse({}), new Response('', { status: 200 }));
    await expect(revoke({ baseUrl, ...client, token: 'tba_x', tokenTypeHint: 'access_token', fetch })).resolves.toBeUndefined();
    await expect(revoke({ baseUrl, ...client, token: 'tbr_y', fetch })).resolves.toBeUndefined();
    expect(calls).toEqual([
      {
        method: 'POST',
        url: `${baseUrl}/oauth/revoke`,
        headers: formHeaders,
        body: `token=tba_x&token_type_hint=access_token&client_id=${client.clientId}&client_secret=${client.clientSecret}`,
      },
      {
        method: 'POST',
        url: `${baseUrl}/oauth/revoke`,
        headers: formHeaders,
        body: `token=tbr_y&client_id=${client.clientId}&client_secret=${client.clientSecret}`,
      },
    ]);
  });

  it('keeps a base URL path prefix', async () => {
    const { fetch, calls } = fakeFetch(jsonResponse(tokens));
    await refresh({ baseUrl: 'https://example.com/tb/', ...client, refreshToken: 'r', fetch });
    expect(calls[0]?.url).toBe('https://example.com/tb/oauth/token');
  });
});

describe('token endpoint errors', () => {
  const exchange = (fetch: (r: Request) => Promise<Response>) =>
    exchangeCode({ baseUrl, ...client, code: 'used', redirectUri: 'http://localhost/cb', fetch }).catch((e: unknown) => e);

  it('invalid_grant (400)', async () => {
    const body = { error: 'invalid_grant', error_description: 'The provided authorization grant is invalid.' };
    const error = (await exchange(fakeFetch(jsonResponse(body, 400)).fetch)) as OAuthError;
    expect(error).toBeInstanceOf(OAuthError);
    expect(error).toBeInstanceOf(TokenbellError);
    expect(error).toMatchObject({
      name: 'OAuthError',
      code: OAUTH_ERROR,
      error: 'invalid_grant',
      error_description: 'The provided authorization grant is invalid.',
      status: 400,
      body,
      message: 'invalid_grant: The provided authorization grant is invalid.',
      request: `POST ${baseUrl}/oauth/token`,
    });
    // Printed (an uncaught error, a logger), it names the request and leaves the response out.
    expect(inspect(error)).toContain(`request: 'POST ${baseUrl}/oauth/token'`);
    // What the error does not have is not printed either.
    expect(inspect(new OAuthError({ error: 'access_denied' }))).not.toContain('undefined');
    expect(inspect(error)).not.toContain('Response');
    expect(error.response?.status).toBe(400);
  });

  it('invalid_client (401) keeps the WWW-Authenticate header reachable', async () => {
    const body = { error: 'invalid_client', error_description: 'Client authentication failed.' };
    const reply = jsonResponse(body, 401, { 'WWW-Authenticate': 'Basic realm="tokenbell"' });
    const error = (await exchange(fakeFetch(reply).fetch)) as OAuthError;
    expect(error).toMatchObject({ error: 'invalid_client', status: 401 });
    expect(error.response?.headers.get('www-authenticate')).toBe('Basic realm="tokenbell"');
  });

  it('unsupported_grant_type without a description', async () => {
    const error = (await exchange(fakeFetch(jsonResponse({ error: 'unsupported_grant_type' }, 400)).fetch)) as OAuthError;
    expect(error).toMatchObject({ error: 'unsupported_grant_type', error_description: undefined, message: 'unsupported_grant_type' });
  });

  it('a non-JSON error body becomes invalid_response with the text and the parse error', async () => {
    const html = '<html><body>502 Bad Gateway</body></html>';
    const error = (await exchange(fakeFetch(new Response(html, { status: 502 })).fetch)) as OAuthError;
    expect(error).toBeInstanceOf(OAuthError);
    expect(error).toMatchObject({ error: 'invalid_response', status: 502, body: html });
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it('an empty error body becomes invalid_response without a body', async () => {
    const error = (await exchange(fakeFetch(new Response(null, { status: 500 })).fetch)) as OAuthError;
    expect(error).toMatchObject({ error: 'invalid_response', status: 500, body: undefined });
    expect(error.cause).toBeUndefined();
  });

  it('a JSON error body without `error` becomes invalid_response', async () => {
    const error = (await exchange(fakeFetch(jsonResponse({ message: 'nope' }, 400)).fetch)) as OAuthError;
    expect(error).toMatchObject({ error: 'invalid_response', status: 400, body: { message: 'nope' } });
  });

  it('a 200 that is not a token response becomes invalid_response', async () => {
    const { fetch } = fakeFetch(new Response('<html>', { status: 200 }), jsonResponse({ token_type: 'bearer' }));
    const notJson = (await exchange(fetch)) as OAuthError;
    expect(notJson).toMatchObject({ error: 'invalid_response', status: 200, body: '<html>' });
    expect(notJson.cause).toBeInstanceOf(SyntaxError);
    await expect(exchange(fetch)).resolves.toMatchObject({ error: 'invalid_response', body: { token_type: 'bearer' } });
  });

  it('a network failure throws TokenbellNetworkError with the cause', async () => {
    const failure = new TypeError('fetch failed', { cause: new Error('ECONNREFUSED') });
    const error = (await exchange(fakeFetch(failure).fetch)) as TokenbellNetworkError;
    expect(error).toBeInstanceOf(TokenbellNetworkError);
    expect(error).not.toBeInstanceOf(OAuthError);
    expect(error.cause).toBe(failure);
    expect(error.message).toContain(`POST ${baseUrl}/oauth/token`);
  });

  it('revoke errors: invalid_client, and a network failure', async () => {
    const body = { error: 'invalid_client', error_description: 'Client authentication failed.' };
    await expect(revoke({ baseUrl, ...client, token: 't', fetch: fakeFetch(jsonResponse(body, 401)).fetch })).rejects.toMatchObject({
      error: 'invalid_client',
      status: 401,
    });
    await expect(
      revoke({ baseUrl, ...client, token: 't', fetch: fakeFetch(new TypeError('fetch failed')).fetch }),
    ).rejects.toBeInstanceOf(TokenbellNetworkError);
  });

  it('password and refresh grants surface OAuth errors too', async () => {
    const invalid = jsonResponse({ error: 'invalid_grant' }, 400);
    await expect(passwordGrant({ baseUrl, username: 'u', password: 'p', fetch: fakeFetch(invalid).fetch })).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    await expect(refresh({ baseUrl, ...client, refreshToken: 'r', fetch: fakeFetch(invalid).fetch })).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });
});
