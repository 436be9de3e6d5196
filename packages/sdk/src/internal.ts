import openapiFetch, { type Client, type Middleware } from 'openapi-fetch';
import { answeredRequests, TokenbellError, TokenbellNetworkError } from './errors.js';
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
    return new TokenbellNetworkError(`${describeRequest(request)} failed: ${String(error)}`, { cause: error });
  },
};

export function typedClient(baseUrl: string, fetch: FetchLike | undefined): Client<paths> {
  const client = createClient<paths>({ baseUrl, fetch });
  client.use(requestsAndNetworkErrors);
  return client;
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
