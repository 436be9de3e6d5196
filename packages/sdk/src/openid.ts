// OpenID Connect for apps that sign users in with tokenbell (or the service it mirrors): discovery, id_token
// verification against the published keys, and userinfo. jose does the JOSE work. It is imported here only, and only
// when an id_token is verified: jose is ECMAScript modules only, so a CommonJS loader without them (Jest's, by default)
// can still require the SDK, and an app that never verifies bundles none of it (the package has no side effects).
import type { JWTVerifyGetKey } from 'jose';
import { OAuthError } from './errors.js';
import type { components } from './generated/openapi.js';
import { type FetchLike, isObject, parseJson, trimSlash, typedClient } from './internal.js';

/** The discovery document (OpenID Connect Discovery 1.0, with RFC 8414's fields). */
export type OpenIdConfiguration = components['schemas']['AuthorizationServerMetadata'];
/** An id_token's claims, as the server issues them. */
export type IdTokenClaims = components['schemas']['IdTokenClaims'];
/** The userinfo endpoint's answer. */
export type UserInfo = components['schemas']['UserInfo'];

interface Endpoint {
  /** The instance's base URL, which is its issuer. */
  baseUrl: string;
  /** A `fetch` to use instead of `globalThis.fetch`. */
  fetch?: FetchLike;
}

const invalidResponse = (description: string, response?: Response, body?: unknown) =>
  new OAuthError({ error: 'invalid_response', error_description: description, status: response?.status, response, body });

/**
 * Reads `/.well-known/openid-configuration` and checks that its issuer is the base URL asked (Discovery section 4.3:
 * a document naming another issuer must not be used).
 * @throws {@link OAuthError} `invalid_response`; {@link TokenbellNetworkError}.
 */
export async function discover(options: Endpoint): Promise<OpenIdConfiguration> {
  const issuer = trimSlash(options.baseUrl);
  const { data, response } = await typedClient(issuer, options.fetch).GET('/.well-known/openid-configuration', { parseAs: 'text' });
  const parsed = parseJson(data);
  if (!response.ok || !parsed.ok || !isObject(parsed.value)) throw invalidResponse(`HTTP ${response.status} without a discovery document`, response, data);
  const document = parsed.value as OpenIdConfiguration;
  if (document.issuer !== issuer) throw invalidResponse(`The discovery document names the issuer ${JSON.stringify(document.issuer)}, not ${JSON.stringify(issuer)}`, response, document);
  return document;
}

export interface VerifyIdTokenOptions extends Endpoint {
  /** The App ID: the token's audience. */
  clientId: string;
  /** The nonce sent with the authorization request (or the password grant); required to match when given. */
  nonce?: string;
  /** The JWK set's URL; `{baseUrl}/oauth/discovery/keys` (the discovery document's `jwks_uri`) by default. */
  jwksUri?: string;
  /** Seconds of clock difference tolerated in `exp` and `iat`; 0 by default. */
  clockTolerance?: number;
}

// One remote key set per URL and fetch, reused across calls: jose caches the keys and refetches when a token names a
// key it has not seen (after a rotation), at most once every 30 seconds.
const keySets = new Map<string, WeakMap<object, JWTVerifyGetKey>>();
const defaultFetch = {};

function keySetFor(jose: typeof import('jose'), url: string, fetch: FetchLike | undefined): JWTVerifyGetKey {
  let byFetch = keySets.get(url);
  if (!byFetch) keySets.set(url, (byFetch = new WeakMap()));
  const key = fetch ?? defaultFetch;
  let keys = byFetch.get(key);
  if (!keys) {
    keys = jose.createRemoteJWKSet(new URL(url), fetch ? { [jose.customFetch]: (input: string, init: RequestInit) => fetch(new Request(input, init)) } : {});
    byFetch.set(key, keys);
  }
  return keys;
}

/**
 * Verifies an id_token as OpenID Connect Core 1.0 section 3.1.3.7 asks: the RS256 signature by a key of the
 * instance's published set, the issuer, the audience (this client), the expiry, and the nonce when one was sent.
 * @throws {@link OAuthError} `invalid_id_token` naming what failed; {@link TokenbellNetworkError} when the keys cannot be read.
 */
export async function verifyIdToken(idToken: string, options: VerifyIdTokenOptions): Promise<IdTokenClaims> {
  const issuer = trimSlash(options.baseUrl);
  const jose = await import('jose');
  const keys = keySetFor(jose, options.jwksUri ?? `${issuer}/oauth/discovery/keys`, options.fetch);
  let claims: IdTokenClaims;
  try {
    const { payload } = await jose.jwtVerify(idToken, keys, { issuer, audience: options.clientId, algorithms: ['RS256'], clockTolerance: options.clockTolerance ?? 0 });
    claims = payload as unknown as IdTokenClaims;
  } catch (error) {
    if (!(error instanceof jose.errors.JOSEError)) throw error;
    throw new OAuthError({ error: 'invalid_id_token', error_description: `The id_token was refused: ${error.message}`, cause: error });
  }
  if (options.nonce !== undefined && claims.nonce !== options.nonce) {
    throw new OAuthError({ error: 'invalid_id_token', error_description: 'The id_token does not carry the nonce of the authorization request' });
  }
  return claims;
}

export interface FetchUserInfoOptions extends Endpoint {
  /** An access token whose grant holds `openid`. */
  accessToken: string;
  /** The id_token's `sub`: the answer must be about the same user (Core 1.0 section 5.3.2). */
  expectedSubject?: string;
}

/**
 * Reads `/oauth/userinfo` with the access token as a bearer token.
 * @throws {@link OAuthError} `invalid_token` (401) or `insufficient_scope` (403, a token without `openid`), or
 * `invalid_response` when the answer is about another subject; {@link TokenbellNetworkError}.
 */
export async function fetchUserInfo(options: FetchUserInfoOptions): Promise<UserInfo> {
  const { data, error, response } = await typedClient(trimSlash(options.baseUrl), options.fetch).GET('/oauth/userinfo', {
    headers: { Authorization: `Bearer ${options.accessToken}` },
    parseAs: 'text',
  });
  // openapi-fetch hands over an error body parsed when it could, as text otherwise.
  const raw: unknown = response.ok ? data : error;
  const parsed = typeof raw === 'string' ? parseJson(raw) : { ok: true as const, value: raw };
  const body = parsed.ok ? parsed.value : undefined;
  if (!response.ok) {
    if (isObject(body) && typeof body.error === 'string') {
      throw new OAuthError({ error: body.error, error_description: typeof body.error_description === 'string' ? body.error_description : undefined, status: response.status, response, body });
    }
    throw invalidResponse(`HTTP ${response.status} without an OAuth error body`, response, data ?? error);
  }
  if (!isObject(body) || typeof body.sub !== 'string') throw invalidResponse('The userinfo endpoint answered without a subject', response, data);
  if (options.expectedSubject !== undefined && body.sub !== options.expectedSubject) {
    throw invalidResponse(`The userinfo answer is about subject ${JSON.stringify(body.sub)}, not ${JSON.stringify(options.expectedSubject)}`, response, body);
  }
  return body as UserInfo;
}
