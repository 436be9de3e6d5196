import type { components } from './generated/openapi.js';

/** `code` of a {@link TokenbellApiError} whose status has no more specific class. */
export const API_ERROR = 'api_error';
/** `code` of a {@link TokenbellValidationError} (HTTP 400). */
export const VALIDATION_ERROR = 'validation_error';
/** `code` of a {@link TokenbellAuthenticationError} (HTTP 401). */
export const AUTHENTICATION_ERROR = 'authentication_error';
/** `code` of a {@link TokenbellPermissionError} (HTTP 403). */
export const PERMISSION_ERROR = 'permission_error';
/** `code` of a {@link TokenbellNotFoundError} (HTTP 404). */
export const NOT_FOUND_ERROR = 'not_found_error';
/** `code` of a {@link TokenbellNetworkError}. */
export const NETWORK_ERROR = 'network_error';
/** `code` of an {@link OAuthError}. */
export const OAUTH_ERROR = 'oauth_error';

/** Every `code` an error thrown by this package can carry. */
export type TokenbellErrorCode =
  | typeof API_ERROR
  | typeof VALIDATION_ERROR
  | typeof AUTHENTICATION_ERROR
  | typeof PERMISSION_ERROR
  | typeof NOT_FOUND_ERROR
  | typeof NETWORK_ERROR
  | typeof OAUTH_ERROR;

/** Which request a response answers ("PUT https://host/api/v3/..."), noted by the clients' middleware. */
export const answeredRequests = new WeakMap<Response, string>();

/**
 * The response as a property that `console.log` and an uncaught error's report leave out: printed, an error
 * shows its status, message and request, not every header of the response.
 */
function keepResponseQuiet(error: Error, response: Response | undefined): void {
  Object.defineProperty(error, 'response', { value: response, enumerable: false, writable: false, configurable: false });
}

/** Printed, an error shows what it has: a property it does not have (`state: undefined`) is left out. */
function keepMissingQuiet(error: Error, keys: readonly string[]): void {
  for (const key of keys) {
    if ((error as unknown as Record<string, unknown>)[key] === undefined) Object.defineProperty(error, key, { enumerable: false });
  }
}

/**
 * Base class of every error this package throws, so one `instanceof` check separates them from
 * programming errors. Switch on {@link TokenbellError.code} rather than on class names, which
 * minifiers may rename.
 */
export abstract class TokenbellError extends Error {
  abstract readonly code: TokenbellErrorCode;
}

/** What {@link TokenbellApiError} is built from. */
export interface TokenbellApiErrorInit {
  status: number;
  message: string;
  /** The response body: parsed JSON when it was JSON, otherwise its text (`undefined` when empty). */
  body: unknown;
  response: Response;
  cause?: unknown;
}

/**
 * The API answered with an error status (or with a success that is not the JSON it promised).
 * Subclasses exist for 400, 401, 403 and 404; {@link TokenbellApiError.from} picks the class.
 */
export class TokenbellApiError extends TokenbellError {
  override readonly name: string = 'TokenbellApiError';
  readonly code: typeof API_ERROR | typeof VALIDATION_ERROR | typeof AUTHENTICATION_ERROR | typeof PERMISSION_ERROR | typeof NOT_FOUND_ERROR =
    API_ERROR;
  /** The HTTP status code. */
  readonly status: number;
  /** The parsed body; an {@link ApiErrorBody} when the server followed the document. */
  readonly body: unknown;
  /** The request this answers, e.g. `PUT http://127.0.0.1:3000/api/v3/notification_settings` (no query). */
  readonly request: string | undefined;
  /** The response, for headers such as `WWW-Authenticate`. Its body has already been read. */
  declare readonly response: Response;

  constructor(init: TokenbellApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.request = answeredRequests.get(init.response);
    this.body = init.body;
    keepResponseQuiet(this, init.response);
    keepMissingQuiet(this, ['request', 'body']);
  }

  /** Builds the error matching the response's status, taking the message from a `{message}` body. */
  static from(response: Response, body: unknown): TokenbellApiError {
    // openapi-fetch reports an empty error body as "" or undefined depending on Content-Length.
    if (body === '') body = undefined;
    const init: TokenbellApiErrorInit = { status: response.status, message: apiMessage(response, body), body, response };
    switch (response.status) {
      case 400:
        return new TokenbellValidationError(init);
      case 401:
        return new TokenbellAuthenticationError(init);
      case 403:
        return new TokenbellPermissionError(init);
      case 404:
        return new TokenbellNotFoundError(init);
      default:
        return new TokenbellApiError(init);
    }
  }
}

/** HTTP 400: a parameter is missing, of the wrong type or out of range. Nothing was changed. */
export class TokenbellValidationError extends TokenbellApiError {
  override readonly name: string = 'TokenbellValidationError';
  override readonly code = VALIDATION_ERROR;
}

/** HTTP 401: no token, or one that is unknown, expired or revoked. Refresh it or sign in again. */
export class TokenbellAuthenticationError extends TokenbellApiError {
  override readonly name: string = 'TokenbellAuthenticationError';
  override readonly code = AUTHENTICATION_ERROR;
}

/** HTTP 403: the token is valid but lacks the scope the operation needs. */
export class TokenbellPermissionError extends TokenbellApiError {
  override readonly name: string = 'TokenbellPermissionError';
  override readonly code = PERMISSION_ERROR;
}

/** HTTP 404: no such group or project, or one the user may not see (the API does not tell them apart). */
export class TokenbellNotFoundError extends TokenbellApiError {
  override readonly name: string = 'TokenbellNotFoundError';
  override readonly code = NOT_FOUND_ERROR;
}

/**
 * The request never got an HTTP response: DNS, connection refused, TLS, CORS, an abort. The
 * underlying error is in `cause`. Requests that fail this way may or may not have reached the server.
 */
export class TokenbellNetworkError extends TokenbellError {
  override readonly name: string = 'TokenbellNetworkError';
  readonly code = NETWORK_ERROR;

  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
  }
}

/** The error body of the API (`components['schemas']['ApiError']`). */
export type ApiErrorBody = components['schemas']['ApiError'];

/**
 * An RFC 6749 `error` value. Besides those of the document's token endpoint, authorization redirects
 * can carry `access_denied`, `unsupported_response_type`, `server_error` and `temporarily_unavailable`
 * (section 4.1.2.1). `invalid_response` is this package's own: the server's answer was neither an
 * RFC 6749 error nor a token response (for example an HTML page from a proxy).
 */
export type OAuthErrorCode =
  | components['schemas']['OAuthError']['error']
  | 'access_denied'
  | 'unsupported_response_type'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'invalid_response'
  // Keeps autocompletion for the known codes while accepting ones a newer server may send.
  | (string & {});

/** What {@link OAuthError} is built from. */
export interface OAuthErrorInit {
  error: OAuthErrorCode;
  error_description?: string | undefined;
  status?: number | undefined;
  response?: Response | undefined;
  body?: unknown;
  state?: string | undefined;
  cause?: unknown;
}

/**
 * An OAuth error response (RFC 6749 section 5.2 from the token endpoint, section 4.1.2.1 from an
 * authorization redirect, RFC 7009 section 2.2.1 from revocation).
 */
export class OAuthError extends TokenbellError {
  override readonly name: string = 'OAuthError';
  readonly code = OAUTH_ERROR;
  /** The RFC 6749 error code, e.g. `invalid_grant`. */
  readonly error: OAuthErrorCode;
  /** The server's human-readable explanation, when it gave one. */
  readonly error_description: string | undefined;
  /** The HTTP status; `undefined` for errors read from a redirect. */
  readonly status: number | undefined;
  /** The request this answers, e.g. `POST http://127.0.0.1:3000/oauth/token`; `undefined` for redirects. */
  readonly request: string | undefined;
  /** The response; `undefined` for errors read from a redirect. Its body has already been read. */
  declare readonly response: Response | undefined;
  /** The parsed body (or its text when it was not JSON). */
  readonly body: unknown;
  /** The `state` an error redirect carried, to tie it to the request that caused it. */
  readonly state: string | undefined;

  constructor(init: OAuthErrorInit) {
    super(
      init.error_description ? `${init.error}: ${init.error_description}` : init.error,
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.error = init.error;
    this.error_description = init.error_description;
    this.status = init.status;
    this.request = init.response ? answeredRequests.get(init.response) : undefined;
    this.body = init.body;
    this.state = init.state;
    keepResponseQuiet(this, init.response);
    keepMissingQuiet(this, ['error_description', 'status', 'request', 'body', 'state']);
  }
}

function apiMessage(response: Response, body: unknown): string {
  if (typeof body === 'object' && body !== null && typeof (body as { message?: unknown }).message === 'string') {
    return (body as ApiErrorBody).message;
  }
  // A proxy's HTML page would make an unreadable message; a short text body is worth showing.
  if (typeof body === 'string' && body.length > 0 && body.length <= 200 && !body.trimStart().startsWith('<')) {
    return `${response.status} ${body}`;
  }
  return `${response.status} ${response.statusText || 'HTTP error'}`.trim();
}
