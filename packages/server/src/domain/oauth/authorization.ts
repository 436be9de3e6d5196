// The authorization endpoint (RFC 6749 section 4.1.1-4.1.2, RFC 7636 section 4.3).
import { nanoid } from 'nanoid';
import type { Storage } from '../storage/index.js';
import type { ApplicationRecord, Scope } from '../storage/records.js';
import { digest, newSecret } from '../secrets.js';
import { isValidChallenge } from './pkce.js';
import { matchingRedirectUri } from './redirect-uris.js';
import { narrowScope } from './scopes.js';
import { findApplicationByUid, isConfidential } from '../applications.js';
import { type Interaction, interactionErrors, readInteraction } from './prompt.js';
import { isExpired } from './tokens.js';

/** The request's parameters, in the order the document lists them: what the consent form carries through. */
export const authorizationParamNames = ['client_id', 'redirect_uri', 'response_type', 'state', 'scope', 'code_challenge', 'code_challenge_method', 'nonce', 'prompt', 'max_age'] as const;

export type AuthorizationRequest = { client_id: string; redirect_uri: string; response_type: string } & {
  [name in (typeof authorizationParamNames)[number]]?: string | undefined;
};

/** OpenID Connect's nonce goes into the id_token; the service refuses one longer than this (its column's width). */
const maxNonceLength = 255;

/** A request the user may be asked to approve. */
export interface ValidAuthorizationRequest {
  application: ApplicationRecord;
  redirect_uri: string;
  state: string | undefined;
  scopes: readonly Scope[];
  code_challenge: string | null;
  /** OpenID Connect's nonce, for the id_token. */
  nonce: string | null;
  /** What OpenID Connect's `prompt` and `max_age` ask of the pages. */
  interaction: Interaction;
  /** The parameters to carry through sign-in and the consent form. */
  params: AuthorizationRequest;
}

export type CheckedAuthorizationRequest =
  | { outcome: 'valid'; request: ValidAuthorizationRequest }
  /** Section 4.1.2.1: with an unknown client or an unregistered redirect URI the user must not be redirected. */
  | { outcome: 'show-error'; problem: 'unknown-client' | 'unregistered-redirect-uri'; message: string }
  | { outcome: 'redirect-error'; location: string };

/** Adds parameters to a redirect URI, keeping the query it already has (section 3.1.2). */
export function withQuery(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.append(k, v);
  return url.toString();
}

export async function checkAuthorizationRequest(storage: Storage, params: AuthorizationRequest): Promise<CheckedAuthorizationRequest> {
  const application = await findApplicationByUid(storage, params.client_id);
  if (!application) {
    return { outcome: 'show-error', problem: 'unknown-client', message: 'Client authentication failed due to unknown client.' };
  }
  if (!matchingRedirectUri(application.redirect_uris, params.redirect_uri)) {
    return { outcome: 'show-error', problem: 'unregistered-redirect-uri', message: 'The redirect URI included is not valid for this application.' };
  }
  const fail = (error: string, description: string): CheckedAuthorizationRequest => ({
    outcome: 'redirect-error',
    location: withQuery(params.redirect_uri, { error, error_description: description, state: params.state }),
  });
  if (params.response_type !== 'code') {
    return fail(
      'unsupported_response_type',
      'The authorization server does not support this response type; only "code" is supported.',
    );
  }
  const scopes = narrowScope(params.scope, application.scopes);
  if (!scopes) return fail('invalid_scope', 'The requested scope is invalid, unknown, or malformed.');
  if (!isConfidential(application) && params.code_challenge === undefined) {
    // A public client's code is only as safe as its PKCE challenge (RFC 9700 section 2.1.1).
    return fail('invalid_request', 'code_challenge is required: this application is a public client, which must use PKCE (S256).');
  }
  let code_challenge: string | null = null;
  if (params.code_challenge !== undefined || params.code_challenge_method !== undefined) {
    if ((params.code_challenge_method ?? 'plain') !== 'S256') {
      return fail('invalid_request', 'code_challenge_method must be S256; the plain method is not supported.');
    }
    if (params.code_challenge === undefined || !isValidChallenge(params.code_challenge)) {
      return fail('invalid_request', 'code_challenge must be the 43-character base64url SHA-256 digest of the verifier.');
    }
    code_challenge = params.code_challenge;
  }
  if (params.nonce !== undefined && params.nonce.length > maxNonceLength) {
    return fail('invalid_request', `nonce must be at most ${maxNonceLength} characters.`);
  }
  const interaction = readInteraction(params);
  if ('problem' in interaction) return fail('invalid_request', interaction.problem);
  return {
    outcome: 'valid',
    request: { application, redirect_uri: params.redirect_uri, state: params.state, scopes, code_challenge, nonce: params.nonce ?? null, interaction, params },
  };
}

/**
 * Whether the user may skip the consent page, as the service lets them (Doorkeeper's `matching_token?`): the
 * application is confidential and the user holds a live token it was issued with exactly these scopes.
 */
export async function alreadyAuthorized(storage: Storage, userId: number, request: ValidAuthorizationRequest, now: number): Promise<boolean> {
  if (!isConfidential(request.application)) return false;
  const wanted = new Set(request.scopes);
  const tokens = await storage.tokens.unrevokedOfUser(userId);
  return tokens.some(
    (t) => t.application_id === request.application.id && !isExpired(t, now) && t.scopes.length === wanted.size && t.scopes.every((s) => wanted.has(s)),
  );
}

/**
 * The user approved: issue a single-use code and say where to send the browser. `authTime` is when they signed in
 * (the id_token's `auth_time`).
 */
export async function approveAuthorization(
  storage: Storage,
  userId: number,
  request: ValidAuthorizationRequest,
  options: { now: number; codeTtl: number; authTime: number | null },
): Promise<string> {
  const code = newSecret('authorizationCode');
  await storage.codes.create({
    id: nanoid(),
    code_digest: digest(code),
    application_id: request.application.id,
    user_id: userId,
    redirect_uri: request.redirect_uri,
    scopes: request.scopes,
    code_challenge: request.code_challenge,
    code_challenge_method: request.code_challenge ? 'S256' : null,
    created_at: options.now,
    expires_at: options.now + options.codeTtl,
    used_at: null,
    nonce: request.nonce,
    auth_time: options.authTime,
  });
  return withQuery(request.redirect_uri, { code, state: request.state });
}

/** OpenID Connect's answer to `prompt=none` where a page would have been needed (Core section 3.1.2.6). */
export function refuseWithoutPage(request: ValidAuthorizationRequest, error: keyof typeof interactionErrors): string {
  return withQuery(request.redirect_uri, { error, error_description: interactionErrors[error], state: request.state });
}

/** The user said no (section 4.1.2.1, access_denied). */
export function denyAuthorization(request: ValidAuthorizationRequest): string {
  return withQuery(request.redirect_uri, {
    error: 'access_denied',
    error_description: 'The resource owner denied the request.',
    state: request.state,
  });
}
