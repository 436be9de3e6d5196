// One error handler turns every failure into the answer its caller expects: RFC 6749 JSON on the OAuth endpoints,
// `{"message": ...}` on the API, an HTML page in the browser. Nothing from inside (stack, secret, cause) leaks out.
import type { ErrorRequestHandler, Request, Response } from 'express';
import { limits } from '../config.js';
import { LoginThrottledError } from '../domain/login-throttle.js';
import { StoreUnavailableError } from '../domain/storage/index.js';
import { InputError } from '../explained-error.js';
import { OAuthError } from '../domain/oauth/errors.js';
import { type GrantRegistry, grantRegistry } from '../domain/oauth/grants.js';
import { errorPage, type Viewer } from '../pages/html.js';
import { errorFormatOf, oauthEndpointOf } from './areas.js';
import type { Metrics } from './operations.js';

/**
 * A refusal with a status and a message for the caller, shown as it is in the format of the request's area: the
 * API's `{"message"}`, or the pages' HTML error page. (The OAuth endpoints answer RFC 6749 errors: OAuthError.)
 */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    /** For the error page: what the person in front of it can do about it, in plain words. */
    readonly advice?: string,
  ) {
    // A refusal is an answer, not a fault: its stack is never shown or logged (only 5xx are), and capturing one cost
    // about 8% of the CPU of a flood of 401s. A 5xx keeps its stack for the log.
    const limit = Error.stackTraceLimit;
    if (status < 500) Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
  }
}

interface ValidationItem {
  path?: string;
  message?: string;
}
interface HttpLikeError {
  status?: number;
  statusCode?: number;
  type?: string;
  errors?: ValidationItem[];
  message?: string;
  headers?: Record<string, string>;
  wwwAuthenticate?: string;
}

const reasons: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

/** Where the validator says a problem is (`/query/level`); other items carry the request path instead. */
const validatorLocations = new Set(['query', 'body', 'params', 'path', 'headers', 'cookies']);

/** The validator's own wording where it is unclear to a caller: it names no parameter in these. */
const clearerMessages: Array<[RegExp, string]> = [
  [/^malformed uri'?$/, 'the path is not valid percent-encoded UTF-8'],
  [/^unsupported media type undefined$/, 'media type not specified'],
];

/**
 * "level must be equal to one of the allowed values: ..." from the validator's `/query/level` item; a field the domain
 * refused (InputError) is worded the same way, so a caller cannot tell which of the two refused it.
 */
export function describeValidationProblem(err: HttpLikeError): string {
  if (err instanceof InputError) return `${err.field} ${err.message}`;
  const first = err.errors?.[0];
  if (!first?.path || !first.message) return err.message ?? 'the request is malformed';
  const message = clearerMessages.find(([pattern]) => pattern.test(first.message!))?.[1] ?? first.message;
  const segments = first.path.split('/').filter(Boolean);
  const where = segments.length > 1 && validatorLocations.has(segments[0]!) ? segments.slice(1).join('.') : undefined;
  return where && !message.includes(`'${where}'`) ? `${where} ${message}` : message;
}

function statusOf(err: HttpLikeError): number {
  const status = err.status ?? err.statusCode;
  return typeof status === 'number' && status >= 400 && status < 600 ? status : 500;
}

function oauthErrorFor(err: unknown, req: Request, status: number, grants: GrantRegistry): OAuthError {
  if (err instanceof OAuthError) return err;
  if (err instanceof LoginThrottledError) return new OAuthError('invalid_request', err.message, { status: 429 });
  if (err instanceof StoreUnavailableError) return new OAuthError('temporarily_unavailable', 'The server cannot reach its data just now; try again shortly.', { status: 503 });
  const grantType = (req.body as Record<string, unknown> | undefined)?.grant_type;
  const endpoint = oauthEndpointOf(req.path);
  if (endpoint === 'token' && typeof grantType === 'string') {
    // The validator refuses a grant type the document lacks before any handler runs; it is still this error.
    try {
      grants.assertServed(grantType);
    } catch (unsupported) {
      return unsupported as OAuthError;
    }
  }
  if (endpoint === 'token_info' && status === 401) return new OAuthError('invalid_token', 'The access token is invalid');
  // A fault of the server's own is not the client's: RFC 6749's registry has server_error for it (section 4.1.2.1),
  // which the token endpoint borrows as it borrows temporarily_unavailable, rather than telling the client to fix its
  // request.
  if (status >= 500) return new OAuthError('server_error', 'The server could not handle the request.', { status: 500 });
  return new OAuthError('invalid_request', describeValidationProblem(err as HttpLikeError), { status: status === 401 ? 400 : status });
}

function statusFor(err: unknown, e: HttpLikeError): number {
  if (err instanceof OAuthError || err instanceof HttpError) return err.status;
  if (err instanceof LoginThrottledError) return 429;
  if (err instanceof StoreUnavailableError) return 503;
  return err instanceof InputError ? 400 : statusOf(e);
}

/**
 * Where a failure of the server's own is reported: with the id the client saw in `X-Request-Id` (absent when no
 * request log runs), so a user's report leads to its line.
 */
export type ErrorLog = (message: string, requestId: string | undefined) => void;

const requestIdOf = (res: Response): string | undefined => res.getHeader('X-Request-Id')?.toString();

/** The API's answer to a refusal or a failure: its status and the `message` of its body. */
export function apiErrorAnswer(err: unknown): { status: number; message: string } {
  if (err instanceof HttpError) return { status: err.status, message: err.message };
  const e = (err ?? {}) as HttpLikeError;
  const status = statusFor(err, e);
  return { status, message: status === 400 ? `400 Bad request - ${describeValidationProblem(e)}` : `${status} ${reasons[status] ?? 'Internal Server Error'}` };
}

export function errorHandler(
  log: ErrorLog = (m) => console.error(m),
  grants: GrantRegistry = grantRegistry(),
  metrics?: Pick<Metrics, 'throttled'>,
  /** Who is signed in, for an error page's header; one it cannot tell (the store is down, say) is left unnamed. */
  viewerOf: (req: Request) => Promise<Viewer> = async () => undefined,
): ErrorRequestHandler {
  return async (err: unknown, req, res, next) => {
    if (res.headersSent) return next(err);
    const e = (err ?? {}) as HttpLikeError;
    const status = statusFor(err, e);
    if (err instanceof StoreUnavailableError) {
      // An outage fails every request alike: the request log's line says it once, as a warning, with the request id
      // (operations.ts), rather than a stack per request here.
      res.locals.storeUnavailable = err;
      res.set('Retry-After', String(limits.storeRetryAfterSeconds));
    } else if (status >= 500) log(`${req.method} ${req.path} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`, requestIdOf(res));

    // RFC 6749 has no error code for "too many attempts", and slow_down belongs to the device flow's polling
    // (RFC 8628); invalid_request ("otherwise malformed") with 429 and Retry-After tells a client not to retry as is.
    if (err instanceof LoginThrottledError) {
      res.set('Retry-After', String(err.retryAfterSeconds));
      metrics?.throttled.inc();
    }
    const format = errorFormatOf(req.path);
    if (format === 'oauth') {
      const oauth = oauthErrorFor(err, req, status, grants);
      res.status(oauth.status).set('Cache-Control', 'no-store').set('Pragma', 'no-cache');
      const challenge = (err as HttpLikeError).wwwAuthenticate;
      if (challenge) res.set('WWW-Authenticate', challenge);
      else if (oauth.code === 'invalid_token') res.set('WWW-Authenticate', `Bearer realm="tokenbell", error="invalid_token"`);
      res.json(oauth.toJSON());
      return;
    }
    if (format === 'message') {
      if (err instanceof HttpError) res.set(err.headers);
      else if (status === 405 && e.headers?.Allow) res.set('Allow', e.headers.Allow);
      const answer = apiErrorAnswer(err);
      res.status(answer.status).json({ message: answer.message });
      return;
    }
    const title = pageTitles[status] ?? (status >= 500 ? 'Something went wrong' : 'This request could not be handled');
    // An unreachable store would only make the error page wait for its timeout to say so.
    const visitor = err instanceof StoreUnavailableError ? undefined : await viewerOf(req).catch(() => undefined);
    res.status(status).type('html').send(errorPage(title, pageMessage(err, status), pageAdvice(err, status), visitor));
  };
}

const pageTitles: Record<number, string> = {
  403: 'This form has expired',
  404: 'Page not found',
  405: 'This page cannot be used that way',
  413: 'What was sent is too large',
  429: 'Too many attempts',
  503: 'Temporarily unavailable',
};

function pageMessage(err: unknown, status: number): string {
  if (err instanceof HttpError) return err.message;
  if (status === 403) return 'The form was sent without the proof that it came from this site, or that proof has expired.';
  if (status === 404) return 'There is no page at this address.';
  if (status === 413) return 'The form sent more than this server accepts.';
  if (err instanceof StoreUnavailableError) return 'The server cannot reach its data just now.';
  if (status >= 500) return 'The server could not handle the request. Try again later.';
  return `The request could not be handled: ${describeValidationProblem(err as HttpLikeError)}.`;
}

function pageAdvice(err: unknown, status: number): string | undefined {
  if (err instanceof HttpError) return err.advice;
  if (status === 403) return 'Go back, reload the page and try again.';
  if (status === 404) return 'Check the address, or start again from the home page.';
  if (status === 413) return 'Go back, shorten what you entered and try again.';
  if (err instanceof StoreUnavailableError) return 'What you sent may not have been saved: try again in a minute.';
  if (status === 400) return 'The link or form that brought you here is incomplete or damaged. If an application sent you here, tell its developer.';
  return undefined;
}

/**
 * Answering an error can fail too (with --validate-responses, an error body the document does not allow is itself
 * rejected); Express's own final handler would then print the stack into the page, so this answers a bare 500.
 */
export function lastResortHandler(log: ErrorLog = (m) => console.error(m)): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    log(`${req.method} ${req.path} failed while answering an error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`, requestIdOf(res));
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.status(500).setHeader('Content-Type', 'application/json');
    res.end('{"message":"500 Internal Server Error"}');
  };
}
