import type { components } from '@tokenbell/sdk';

export type OAuthErrorCode = components['schemas']['OAuthError']['error'];

/** An RFC 6749 section 5.2 error; `invalid_client` answers 401, the others 400. */
export class OAuthError extends Error {
  readonly status: number;
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    options: { status?: number; cause?: unknown } = {},
  ) {
    const status = options.status ?? (code === 'invalid_client' || code === 'invalid_token' ? 401 : 400);
    // Expected answers (wrong secret, spent code) need no stack: nothing shows or logs a 4xx's, and capturing one
    // is a measurable part of answering it. A 5xx keeps its stack for the log.
    const limit = Error.stackTraceLimit;
    if (status < 500) Error.stackTraceLimit = 0;
    super(description, { cause: options.cause });
    Error.stackTraceLimit = limit;
    this.name = 'OAuthError';
    this.status = status;
  }

  toJSON(): components['schemas']['OAuthError'] {
    return { error: this.code, error_description: this.description };
  }
}

export const invalidGrant = () =>
  new OAuthError(
    'invalid_grant',
    'The provided authorization grant is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
  );

export const invalidClient = () =>
  new OAuthError(
    'invalid_client',
    'Client authentication failed due to unknown client, no client authentication included, or unsupported authentication method.',
  );
