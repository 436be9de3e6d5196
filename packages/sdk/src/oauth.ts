import { OAuthError } from './errors.js';
import type { components, operations } from './generated/openapi.js';
import { compact, type FetchLike, isObject, parseJson, trimSlash, typedClient } from './internal.js';

/** A successful token response (spec 2.2, RFC 6749 section 5.1). */
export type TokenResponse = components['schemas']['TokenResponse'];
/** The query parameters of `GET /oauth/authorize`. */
export type AuthorizationRequestParams = operations['authorize']['parameters']['query'];
/** One of the service's scopes, as the document lists them (`api`, `read_repository`, `openid`, ...). */
export type ScopeName = components['schemas']['Scope'];
/** Scopes, space-separated or as a list of the document's scopes (`'api read_user'` or `['api', 'read_user']`). */
export type Scope = string | readonly ScopeName[];

const encoder = new TextEncoder();

function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function randomToken(): string {
  // 32 bytes is RFC 7636's recommendation for the verifier: 256 bits, 43 base64url characters.
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

/** @internal The scope parameter: a list joined with spaces. */
export function scopeParam(scope: Scope | undefined): string | undefined {
  return scope === undefined || typeof scope === 'string' ? scope : scope.join(' ');
}

/**
 * Generates a PKCE code verifier: 32 random bytes, base64url-encoded into 43 characters of the
 * unreserved set (RFC 7636 section 4.1).
 */
export function generateCodeVerifier(): string {
  return randomToken();
}

/**
 * Derives the `S256` code challenge, `BASE64URL(SHA256(ASCII(code_verifier)))` (RFC 7636 section 4.2).
 */
export async function calculateCodeChallenge(codeVerifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(codeVerifier))));
}

/**
 * Generates an unguessable `state` value binding the authorization request to the user's session,
 * against cross-site request forgery (RFC 6749 section 10.12).
 */
export function generateState(): string {
  return randomToken();
}

/** Generates an OpenID Connect `nonce` (Core 1.0 section 15.5.2): as unguessable as the state. */
export function generateNonce(): string {
  return randomToken();
}

export interface AuthorizationUrlOptions {
  /** The instance's base URL; the endpoint is `{baseUrl}/oauth/authorize`. */
  baseUrl: string;
  /** The App ID. */
  clientId: string;
  /** Must equal one of the application's redirect URIs exactly, and be sent again to {@link exchangeCode}. */
  redirectUri: string;
  /** Requested scopes; the server defaults to all of the application's. */
  scope?: Scope;
  /** A `state` of your own; by default one is generated. Store it (e.g. in the session) for {@link checkState}. */
  state?: string;
  /** Whether to send an RFC 7636 `S256` challenge; default `true`. Store the returned `codeVerifier` for the exchange. */
  pkce?: boolean;
  /**
   * OpenID Connect (with `openid` in the scope): a nonce the id_token must carry back; store it for
   * `verifyIdToken`. Not sent when not given.
   */
  nonce?: string;
}

export interface AuthorizationUrl {
  /** Where to redirect the user's browser. */
  url: string;
  /** The `state` sent; compare the returned one to it with {@link checkState}. */
  state: string;
  /** The PKCE verifier to send to {@link exchangeCode}; keep it server-side, never in the URL. */
  codeVerifier?: string;
}

/**
 * Builds the authorization request URL of the authorization code grant (RFC 6749 section 4.1.1),
 * with a PKCE `S256` challenge by default (RFC 7636 sections 4.1–4.3) and a random `state`
 * (RFC 6749 section 10.12) unless one is given.
 */
export function authorizationUrl(options: AuthorizationUrlOptions & { pkce?: true }): Promise<AuthorizationUrl & { codeVerifier: string }>;
export function authorizationUrl(options: AuthorizationUrlOptions & { pkce: false }): Promise<Omit<AuthorizationUrl, 'codeVerifier'>>;
export function authorizationUrl(options: AuthorizationUrlOptions): Promise<AuthorizationUrl>;
export async function authorizationUrl(options: AuthorizationUrlOptions): Promise<AuthorizationUrl> {
  const state = options.state ?? generateState();
  const codeVerifier = options.pkce === false ? undefined : generateCodeVerifier();
  const params: AuthorizationRequestParams = {
    client_id: options.clientId,
    redirect_uri: options.redirectUri,
    response_type: 'code',
    state,
    scope: scopeParam(options.scope),
    code_challenge: codeVerifier && (await calculateCodeChallenge(codeVerifier)),
    code_challenge_method: codeVerifier && 'S256',
    nonce: options.nonce,
  };
  const query = new URLSearchParams(compact(params) as Record<string, string>);
  const url = `${trimSlash(options.baseUrl)}/oauth/authorize?${query}`;
  return codeVerifier === undefined ? { url, state } : { url, state, codeVerifier };
}

/**
 * Compares the `state` returned to the redirect URI with the one sent (RFC 6749 section 10.12) in
 * time independent of where they differ. Missing or empty values never match.
 */
export function checkState(returned: string | null | undefined, expected: string | null | undefined): boolean {
  if (!returned || !expected) return false;
  const a = encoder.encode(returned);
  const b = encoder.encode(expected);
  // No early exit: the loop always covers the expected value, so timing reveals its length only.
  let diff = a.length ^ b.length;
  for (let i = 0; i < b.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/** What an authorization redirect carried on success. */
export interface CallbackParams {
  code: string;
  state: string | undefined;
}

/**
 * Reads the authorization response from the redirect URI (RFC 6749 section 4.1.2): `code` and
 * `state`, or the error response of section 4.1.2.1, which is thrown as an {@link OAuthError}
 * (with the `state` it carried). Relative URLs such as an HTTP server's `req.url` are accepted.
 */
export function callbackParams(url: string | URL | URLSearchParams): CallbackParams {
  const params =
    url instanceof URLSearchParams ? url : (typeof url === 'string' ? new URL(url, 'http://callback.invalid') : url).searchParams;
  const state = params.get('state') ?? undefined;
  const error = params.get('error');
  if (error !== null) {
    throw new OAuthError({ error, error_description: params.get('error_description') ?? undefined, state });
  }
  const code = params.get('code');
  if (!code) {
    throw new OAuthError({ error: 'invalid_request', error_description: 'The redirect carries neither code nor error', state });
  }
  return { code, state };
}

/** @internal What every call of an OAuth endpoint takes. */
export interface EndpointOptions {
  /** The instance's base URL. */
  baseUrl: string;
  /** A `fetch` to use instead of `globalThis.fetch`. */
  fetch?: FetchLike;
}

// openapi-fetch form-encodes the body only when Content-Type is exactly this value.
/** @internal */
export const formHeaders = { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' } as const;

/** @internal The OAuthError an endpoint's error answer stands for. */
export function errorFrom(response: Response, body: unknown): OAuthError {
  if (isObject(body) && typeof body.error === 'string') {
    return new OAuthError({
      error: body.error,
      error_description: typeof body.error_description === 'string' ? body.error_description : undefined,
      status: response.status,
      response,
      body,
    });
  }
  if (body === '') body = undefined;
  // openapi-fetch leaves a body it could not parse as text; parse again only to keep the reason.
  const parsed = typeof body === 'string' ? parseJson(body) : undefined;
  return new OAuthError({
    error: 'invalid_response',
    error_description: `HTTP ${response.status} without an OAuth error body`,
    status: response.status,
    response,
    body,
    cause: parsed && !parsed.ok ? parsed.error : undefined,
  });
}

/** @internal A token request: the token response, or the OAuthError the endpoint answered. */
export async function tokenRequest(options: EndpointOptions & { signal?: AbortSignal | undefined }, body: components['schemas']['TokenRequest']): Promise<TokenResponse> {
  const { data, error, response } = await typedClient(options.baseUrl, options.fetch).POST('/oauth/token', {
    body: compact(body),
    headers: formHeaders,
    parseAs: 'text',
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (!response.ok) throw errorFrom(response, error);
  return successOf<TokenResponse>(response, data, 'The token endpoint', ['access_token', 'token_type']);
}

/**
 * A successful OAuth answer's body, once it is JSON with these string fields; `invalid_response` otherwise (a proxy's
 * page, a truncated body), naming the endpoint and the fields it lacked.
 * @internal
 */
export function successOf<T>(response: Response, data: string | undefined, endpoint: string, fields: readonly string[]): T {
  const parsed = parseJson(data);
  if (parsed.ok && isObject(parsed.value) && fields.every((field) => typeof (parsed.value as Record<string, unknown>)[field] === 'string')) {
    return parsed.value as T;
  }
  throw new OAuthError({
    error: 'invalid_response',
    error_description: `${endpoint} answered without ${fields.join(' and ')}`,
    status: response.status,
    response,
    body: parsed.ok ? parsed.value : data,
    cause: parsed.ok ? undefined : parsed.error,
  });
}

/** A confidential client: a server-side app that authenticates with its App Secret. */
export interface ConfidentialClient {
  /** The App ID. */
  clientId: string;
  /** The App Secret; sent in the body (`client_secret_post`, RFC 6749 section 2.3.1). */
  clientSecret: string;
}

/**
 * A public client (registered as not confidential: a browser or native app, RFC 6749 section 2.1): it has no App
 * Secret and identifies itself by its App ID alone; it must use PKCE.
 */
export interface PublicClient {
  /** The App ID. */
  clientId: string;
  clientSecret?: undefined;
}

export type ClientCredentials = ConfidentialClient | PublicClient;

interface CodeExchange extends EndpointOptions {
  /** The `code` from {@link callbackParams}. */
  code: string;
  /** The same `redirectUri` as in {@link authorizationUrl}. */
  redirectUri: string;
}

/**
 * A confidential client sends its secret and the verifier when its request carried a challenge; a public client has
 * no secret and always carries a challenge, so without a secret the verifier is required.
 */
export type ExchangeCodeOptions = CodeExchange &
  (
    | (ConfidentialClient & {
        /** The verifier {@link authorizationUrl} returned; required when the request carried a challenge. */
        codeVerifier?: string;
      })
    | (PublicClient & {
        /** The verifier {@link authorizationUrl} returned: a public client always uses PKCE. */
        codeVerifier: string;
      })
  );

/**
 * Exchanges an authorization code for tokens: the access token request of the authorization code
 * grant (RFC 6749 section 4.1.3), with the PKCE `code_verifier` (RFC 7636 section 4.5).
 * @throws {@link OAuthError} e.g. `invalid_grant` for a wrong, expired or used code; {@link TokenbellNetworkError}.
 */
export function exchangeCode(options: ExchangeCodeOptions): Promise<TokenResponse> {
  return tokenRequest(options, {
    grant_type: 'authorization_code',
    code: options.code,
    redirect_uri: options.redirectUri,
    code_verifier: options.codeVerifier,
    client_id: options.clientId,
    client_secret: options.clientSecret,
  });
}

export interface PasswordGrantOptions extends EndpointOptions, Partial<ConfidentialClient> {
  /** Login name or e-mail address. */
  username: string;
  password: string;
  /** Requested scopes; the server defaults to `api`. */
  scope?: Scope;
}

/**
 * Exchanges a user's credentials for an access token: the resource owner password credentials grant
 * (RFC 6749 section 4.3.2). Only for highly trusted clients, which must not store the credentials;
 * refused with `invalid_grant` for users with two-factor authentication, exactly as for a wrong password.
 * The answer has no refresh token.
 * @throws {@link OAuthError}; {@link TokenbellNetworkError}.
 */
export function passwordGrant(options: PasswordGrantOptions): Promise<TokenResponse> {
  return tokenRequest(options, {
    grant_type: 'password',
    username: options.username,
    password: options.password,
    scope: scopeParam(options.scope),
    client_id: options.clientId,
    client_secret: options.clientSecret,
  });
}

export type RefreshOptions = EndpointOptions &
  ClientCredentials & {
    refreshToken: string;
    /** No more than the original grant's scopes; defaults to all of them. */
    scope?: Scope;
  };

/**
 * Renews an access token with a refresh token (RFC 6749 section 6). The answer carries a new refresh
 * token and the old pair is revoked, so store both.
 * @throws {@link OAuthError} e.g. `invalid_grant` for a revoked or used refresh token; {@link TokenbellNetworkError}.
 */
export function refresh(options: RefreshOptions): Promise<TokenResponse> {
  return tokenRequest(options, {
    grant_type: 'refresh_token',
    refresh_token: options.refreshToken,
    scope: scopeParam(options.scope),
    client_id: options.clientId,
    client_secret: options.clientSecret,
  });
}

export type RevokeOptions = EndpointOptions &
  ClientCredentials & {
    /** The access or refresh token; the other member of its pair is revoked too. */
    token: string;
    tokenTypeHint?: 'access_token' | 'refresh_token';
  };

/**
 * Revokes a token (RFC 7009 section 2.1). Resolves also for an unknown, expired or already revoked
 * token, as section 2.2 requires of the server; the response body is ignored.
 * @throws {@link OAuthError} e.g. `invalid_client` (401); {@link TokenbellNetworkError}.
 */
export async function revoke(options: RevokeOptions): Promise<void> {
  const { error, response } = await typedClient(options.baseUrl, options.fetch).POST('/oauth/revoke', {
    body: compact({
      token: options.token,
      token_type_hint: options.tokenTypeHint,
      client_id: options.clientId,
      client_secret: options.clientSecret,
    }),
    headers: formHeaders,
    parseAs: 'text',
  });
  if (!response.ok) throw errorFrom(response, error);
}
