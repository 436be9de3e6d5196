// The device authorization grant (RFC 8628), for command-line tools and devices that cannot show the user a browser:
// ask for a device code and a user code, tell the user where to type the code, and poll the token endpoint until they
// answer. A module of its own that the main entry re-exports, with nothing run at load, so that an app which never
// calls these ships none of it.
import { OAuthError } from './errors.js';
import type { components } from './generated/openapi.js';
import { compact, typedClient } from './internal.js';
import { type ClientCredentials, type EndpointOptions, errorFrom, formHeaders, type Scope, scopeParam, successOf, tokenRequest, type TokenResponse } from './oauth.js';

/** The device authorization response (RFC 8628 section 3.2). */
export type DeviceAuthorizationResponse = components['schemas']['DeviceAuthorizationResponse'];

export type StartDeviceAuthorizationOptions = EndpointOptions &
  ClientCredentials & {
    /** Requested scopes; the server defaults to all of the application's. */
    scope?: Scope;
  };

/**
 * Starts a device authorization (RFC 8628 section 3.1): the answer's `device_code` stays with the caller, for
 * {@link pollDeviceToken}; show the user `verification_uri` and `user_code` (or `verification_uri_complete`, as a link
 * or QR code) and tell them to approve there.
 * @throws {@link OAuthError} e.g. `invalid_client` (401) or `invalid_scope`; {@link TokenbellNetworkError}.
 */
export async function startDeviceAuthorization(options: StartDeviceAuthorizationOptions): Promise<DeviceAuthorizationResponse> {
  const body: components['schemas']['DeviceAuthorizationRequest'] = {
    client_id: options.clientId,
    client_secret: options.clientSecret,
    scope: scopeParam(options.scope),
  };
  const { data, error, response } = await typedClient(options.baseUrl, options.fetch).POST('/oauth/authorize_device', {
    body: compact(body),
    headers: formHeaders,
    parseAs: 'text',
  });
  if (!response.ok) throw errorFrom(response, error);
  return successOf<DeviceAuthorizationResponse>(response, data, 'The device authorization endpoint', ['device_code', 'user_code']);
}

export type PollDeviceTokenOptions = EndpointOptions &
  ClientCredentials & {
    /** The `device_code` of {@link startDeviceAuthorization}'s answer. */
    deviceCode: string;
    /** Seconds to wait before each poll: the answer's `interval`. */
    interval: number;
    /** The answer's `expires_in`: once that long has been waited, polling stops with `expired_token`. */
    expiresIn?: number;
    /** Stops polling; the promise rejects with the signal's reason. */
    signal?: AbortSignal;
    /**
     * How to wait between polls, in seconds (the unit of `interval`): by default a timer. A test can pass the test
     * helpers' `advanceClock` as it is, which moves the server's clock instead, so that minutes of polling take no time.
     */
    wait?: (seconds: number, signal?: AbortSignal) => Promise<unknown>;
  };

/** RFC 8628 section 3.5: after `slow_down` the interval grows by 5 seconds, for this and every later poll. */
const slowDownStep = 5;

/**
 * Polls the token endpoint with the device code (RFC 8628 section 3.4), waiting `interval` seconds before each poll
 * and 5 more after each `slow_down` (section 3.5), until the user answers: resolves with the token response once
 * they approve.
 * @throws {@link OAuthError} `access_denied` when the user denies, `expired_token` when the code expires first (from the
 * server, or from `expiresIn` without another poll), or any other error the token endpoint answers;
 * {@link TokenbellNetworkError}; the signal's reason when aborted.
 */
export async function pollDeviceToken(options: PollDeviceTokenOptions): Promise<TokenResponse> {
  const { signal, wait = waitFor } = options;
  const deadline = options.expiresIn ?? Infinity;
  let interval = options.interval;
  let waited = 0;
  for (;;) {
    if (waited + interval > deadline) {
      throw new OAuthError({ error: 'expired_token', error_description: 'The device code expired before the user answered (expires_in has passed).' });
    }
    await wait(interval, signal);
    waited += interval;
    try {
      return await tokenRequest(
        { ...options, signal },
        { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: options.deviceCode, client_id: options.clientId, client_secret: options.clientSecret },
      );
    } catch (error) {
      // An abort during the request reaches here as a network error; it is the caller's abort all the same.
      if (signal?.aborted) throw signal.reason;
      if (!(error instanceof OAuthError)) throw error;
      if (error.error === 'slow_down') interval += slowDownStep;
      else if (error.error !== 'authorization_pending') throw error;
    }
  }
}

/** A timer that an abort ends early, rejecting with the signal's reason. */
function waitFor(seconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, seconds * 1000);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
