import openapiFetch, { type Client, type Middleware } from 'openapi-fetch';
import { answeredRequests, TokenbellApiError, TokenbellError, TokenbellNetworkError } from './errors.js';
import type { paths } from './generated/openapi.js';

// Our CJS build is emitted by esbuild in Node mode (the package is "type": "module"), where a default
// import of a CommonJS module is its whole module.exports, and openapi-fetch's CJS file keeps the
// function under `.default`. The ESM build gets the function directly.
const createClient: typeof openapiFetch =
  typeof openapiFetch === 'function' ? openapiFetch : (openapiFetch as unknown as { default: typeof openapiFetch }).default;

/** The `fetch` this package calls: anything that takes a `Request` and answers a `Response`. */
export type FetchLike = (input: Request) => Promise<Response>;

/** A request as errors name it: method, origin and path. The query may hold an access token, so it is left out. */
function describeRequest(request: Request): string {
  const url = new URL(request.url);
  return `${request.method} ${url.origin}${url.pathname}`;
}

type Failure = { message?: unknown; code?: unknown; cause?: unknown; errors?: unknown[] } | null | undefined;

/**
 * Why the request failed, in words: fetch's own message is "fetch failed" whatever happened, and the reason
 * (`connect ECONNREFUSED 127.0.0.1:3000`, `getaddrinfo ENOTFOUND`, a TLS error) is causes down, or the first of an
 * AggregateError's when both addresses of a name were tried.
 */
function reasonOf(error: unknown): string {
  let reason = error as Failure;
  for (let depth = 0; depth < 5 && reason?.cause != null; depth++) reason = reason.cause as Failure;
  if (Array.isArray(reason?.errors) && reason.errors.length > 0) reason = reason.errors[0] as Failure;
  const message = typeof reason?.message === 'string' && reason.message !== '' ? reason.message : String(reason);
  return typeof reason?.code === 'string' && !message.includes(reason.code) ? `${message} (${reason.code})` : message;
}

/**
 * openapi-fetch calls `onError` only when `fetch` itself rejects, so this turns exactly the
 * network failures (not HTTP errors, not bugs in middleware) into one catchable class. `onResponse`
 * notes which request each response answers, for the errors built from it.
 */
const requestsAndNetworkErrors: Middleware = {
  onResponse({ request, response }) {
    answeredRequests.set(response, describeRequest(request));
  },
  onError({ request, error }) {
    if (error instanceof TokenbellError) return error;
    return new TokenbellNetworkError(`${describeRequest(request)} failed: ${reasonOf(error)}`, { cause: error });
  },
};

export function typedClient(baseUrl: string, fetch: FetchLike | undefined): Client<paths> {
  const client = createClient<paths>({ baseUrl, fetch });
  client.use(requestsAndNetworkErrors);
  return client;
}

/**
 * How API calls authenticate (spec section 5):
 * - `{ accessToken, via: 'header' }` sends `Authorization: Bearer <token>` (RFC 6750 section 2.1), the default;
 * - `{ accessToken, via: 'query' }` sends `?access_token=<token>` (RFC 6750 section 2.3), which ends up in logs;
 * - `{ privateToken }` sends a personal access token as `PRIVATE-TOKEN: <token>`.
 */
export type TokenbellAuth =
  | { accessToken: string; via?: 'header' | 'query' }
  | { privateToken: string };

/**
 * A {@link typedClient} that authenticates every request with `currentAuth()`, read per request so that a
 * caller can change credentials on a client that already exists.
 */
export function authenticatedClient(baseUrl: string, fetch: FetchLike | undefined, currentAuth: () => TokenbellAuth | null): Client<paths> {
  const client = typedClient(baseUrl, fetch);
  client.use({
    onRequest: ({ request }) => {
      const auth = currentAuth();
      return auth ? applyAuth(request, auth) : undefined;
    },
  });
  return client;
}

async function applyAuth(request: Request, auth: TokenbellAuth): Promise<Request | undefined> {
  if ('privateToken' in auth) {
    request.headers.set('PRIVATE-TOKEN', auth.privateToken);
    return undefined;
  }
  if (auth.via !== 'query') {
    request.headers.set('Authorization', `Bearer ${auth.accessToken}`);
    return undefined;
  }
  // A Request's URL is immutable, so the query variant needs a new Request. The body is buffered
  // because passing a stream on needs `duplex: 'half'`, which not every runtime supports.
  const url = new URL(request.url);
  url.searchParams.set('access_token', auth.accessToken);
  return new Request(url, {
    method: request.method,
    headers: request.headers,
    body: request.body === null ? null : await request.arrayBuffer(),
    signal: request.signal,
    credentials: request.credentials,
    cache: request.cache,
    redirect: request.redirect,
    integrity: request.integrity,
    keepalive: request.keepalive,
    mode: request.mode,
    referrerPolicy: request.referrerPolicy,
  });
}

// Parsing ourselves (rather than openapi-fetch's `parseAs: 'json'`) lets a 2xx with a broken body
// become a TokenbellApiError carrying the response instead of a bare SyntaxError.
export const asText = { parseAs: 'text' } as const;

type Pending = Promise<{ data?: string; error?: unknown; response: Response }>;

/** The JSON body of a 2xx answer; an error status throws the {@link TokenbellApiError} subclass it calls for. */
export async function json<T>(pending: Pending): Promise<T> {
  const { data, error, response } = await pending;
  if (!response.ok) throw TokenbellApiError.from(response, error);
  const parsed = parseJson(data);
  if (!parsed.ok) {
    throw new TokenbellApiError({
      status: response.status,
      message: `${response.status} response body is not JSON`,
      body: data,
      response,
      cause: parsed.error,
    });
  }
  return parsed.value as T;
}

/** As {@link json}, for operations that answer 204 without a body. */
export async function noContent(pending: Pending): Promise<void> {
  const { error, response } = await pending;
  if (!response.ok) throw TokenbellApiError.from(response, error);
}

export type Parsed = { ok: true; value: unknown } | { ok: false; error: unknown };

export function parseJson(text: string | undefined): Parsed {
  try {
    // openapi-fetch hands over `undefined` for an empty body; that is as invalid as "" here.
    return { ok: true, value: JSON.parse(text ?? '') };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Drops `undefined` members, which URLSearchParams would otherwise send as the string "undefined". */
export function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

export function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
