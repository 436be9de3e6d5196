// The token endpoint's grants (RFC 6749 sections 4.1.3, 4.3.2 and 6; RFC 7636 section 4.6; RFC 8628 section 3.4).
import type { components } from '@tokenbell/sdk';
import type { Storage } from '../storage/index.js';
import type { ApplicationRecord, Scope, UserRecord } from '../storage/records.js';
import { authenticate } from '../accounts.js';
import { digest } from '../secrets.js';
import type { SingleUseOutcome } from '../storage/index.js';
import { OAuthError, invalidGrant } from './errors.js';
import { verifierMatches } from './pkce.js';
import { scopes as allScopes } from '../../openapi/document.js';
import { narrowScope } from './scopes.js';
import { type TokenResponse, issueTokenPair, newTokenPair } from './tokens.js';
import { isConfidential } from '../applications.js';
import { isActive } from '../users.js';
import type { IssuedFor, IssuedGrant } from '../oidc/id-token.js';
import { pollStep } from './device-authorization.js';

type Schemas = components['schemas'];
export interface GrantContext {
  /** Where codes are redeemed and refresh tokens rotated, atomically, among the rest. */
  storage: Storage;
  /** The authenticated client; null only where the grant allows an anonymous client. */
  client: ApplicationRecord | null;
  now: number;
  tokenTtl: number;
  /**
   * How the password grant checks credentials: the HTTP layer passes the throttled check (login-throttle.ts), which
   * answers null for a two-factor account's right password too.
   */
  checkPassword?: (login: string, password: string) => Promise<UserRecord | null>;
}

/** The grant of a single-use step this request won; its OAuth error otherwise (unknown and replayed alike). */
function wonOrThrow(outcome: SingleUseOutcome<OAuthError>, issued: IssuedGrant | undefined): IssuedGrant {
  if (outcome.outcome === 'refused') throw outcome.reason;
  if (outcome.outcome !== 'issued' || !issued) throw invalidGrant();
  return issued;
}

const invalidScope = () => new OAuthError('invalid_scope', 'The requested scope is invalid, unknown, malformed, or exceeds the scope granted.');

function grantedScopes(requested: string | undefined, allowed: readonly Scope[], byDefault: readonly Scope[] = allowed): Scope[] {
  const scopes = narrowScope(requested, allowed, byDefault);
  if (!scopes) throw invalidScope();
  return scopes;
}

/**
 * Section 4.1.3: a code is single-use, short-lived, and bound to its client, redirect URI and PKCE challenge. The
 * checks run inside the store's redemption, on the stored code, so a refused request burns nothing and only one of
 * concurrent exchanges can win; a code used before revokes what was issued from it (section 4.1.2).
 */
export async function exchangeAuthorizationCode(
  ctx: GrantContext & { client: ApplicationRecord },
  params: Schemas['AuthorizationCodeTokenRequest'],
): Promise<IssuedGrant> {
  const { client, now } = ctx;
  let issued: IssuedGrant | undefined;
  const outcome = await ctx.storage.grants.redeemCode(
    digest(params.code),
    client.id,
    (code) => {
      // The authorization endpoint gives a public client no code without a challenge; checked again here.
      if (code.code_challenge === null && !isConfidential(client)) return invalidGrant();
      if (now >= code.expires_at || code.redirect_uri !== params.redirect_uri) return invalidGrant();
      if (code.code_challenge !== null) {
        if (params.code_verifier === undefined || !verifierMatches(params.code_verifier, code.code_challenge)) {
          return new OAuthError('invalid_grant', 'The PKCE code_verifier does not match the code_challenge of the authorization request.');
        }
      } else if (params.code_verifier !== undefined) {
        // A verifier with no challenge is a downgrade attempt or a broken client (OAuth 2.0 Security BCP, RFC 9700 2.1.1).
        return new OAuthError('invalid_grant', 'A code_verifier was sent but the authorization request had no code_challenge.');
      }
      return isActive(code.user) ? undefined : invalidGrant();
    },
    (code) => {
      const auth_time = code.auth_time ?? null;
      const { pair, response } = newTokenPair({ user_id: code.user_id, application_id: client.id, scopes: code.scopes, withRefreshToken: true, now, ttl: ctx.tokenTtl, auth_time });
      issued = { response, issuedFor: { user_id: code.user_id, application: client, scopes: code.scopes, nonce: code.nonce ?? null, auth_time } };
      return pair;
    },
    now,
  );
  return wonOrThrow(outcome, issued);
}

/**
 * The one answer for an unknown login, a wrong password and the right password of a two-factor account (spec 5.4):
 * the grant must not confirm a two-factor account's password, so it says what to do in either case (as GitLab, whose
 * answer is the same for both).
 */
export const invalidCredentialsDescription =
  'Invalid username or password. Accounts with two-factor authentication cannot use the password grant: use a personal access token.';

/** Section 4.3: credentials are used for this one request; no refresh token is issued (spec 2.2). */
export async function passwordGrant(ctx: GrantContext, params: Schemas['PasswordTokenRequest']): Promise<IssuedGrant> {
  const { storage, client, now } = ctx;
  // Without a client the user may ask for any scope; `api` is what the password grant has always given.
  const scopes = client ? grantedScopes(params.scope, client.scopes) : grantedScopes(params.scope, allScopes, ['api']);
  const user = await (ctx.checkPassword ?? ((login, password) => authenticate(storage, login, password)))(params.username, params.password);
  if (!user || user.two_factor_enabled) throw new OAuthError('invalid_grant', invalidCredentialsDescription);
  // The user authenticated with this very request.
  const issuedFor: IssuedFor = { user_id: user.id, application: client, scopes, nonce: params.nonce ?? null, auth_time: now };
  const response = await issueTokenPair(storage, { user_id: user.id, application_id: client?.id ?? null, scopes, withRefreshToken: false, now, ttl: ctx.tokenTtl, auth_time: now });
  return { response, issuedFor };
}

/**
 * Section 6: the refresh token is rotated and the old pair revoked; the scope may only narrow. A rotated refresh
 * token coming back means it leaked: the store ends the whole chain (RFC 9700 section 4.14.2).
 */
export async function refreshGrant(
  ctx: GrantContext & { client: ApplicationRecord },
  params: Schemas['RefreshTokenRequest'],
): Promise<IssuedGrant> {
  const { client, now } = ctx;
  let scopes: Scope[] = [];
  let issued: IssuedGrant | undefined;
  const outcome = await ctx.storage.grants.rotateRefresh(
    digest(params.refresh_token),
    client.id,
    (previous) => {
      if (!isActive(previous.user)) return invalidGrant();
      const narrowed = narrowScope(params.scope, previous.scopes, previous.scopes);
      if (!narrowed) return invalidScope();
      scopes = narrowed;
      return undefined;
    },
    (previous) => {
      // The sign-in that started the chain stays its authentication time (OpenID Connect Core 1.0 section 12.2).
      const auth_time = previous.auth_time ?? null;
      const { pair, response } = newTokenPair({ user_id: previous.user_id, application_id: client.id, scopes, withRefreshToken: true, now, ttl: ctx.tokenTtl, auth_time });
      issued = { response, issuedFor: { user_id: previous.user_id, application: client, scopes, nonce: null, auth_time } };
      return pair;
    },
    now,
  );
  return wonOrThrow(outcome, issued);
}

/**
 * RFC 8628 section 3.4: the device polls with its device code. Everything but the tokens is an answer of section 3.5
 * (device-authorization.ts pollStep), decided in the store's poll on the stored version, so that of concurrent polls
 * after the approval exactly one gets the tokens; the device code is spent with it, and is `invalid_grant` from then
 * on, like an unknown one or another client's. A spent code coming back revokes nothing, unlike an authorization
 * code: a device may well poll twice at once (a retry after a timeout), and its own tokens must survive that.
 */
export async function deviceCodeGrant(ctx: GrantContext & { client: ApplicationRecord }, params: Schemas['DeviceCodeTokenRequest']): Promise<IssuedGrant> {
  const { client, now } = ctx;
  let issued: IssuedGrant | undefined;
  const outcome = await ctx.storage.deviceGrants.poll(
    digest(params.device_code),
    client.id,
    (grant) => pollStep(grant, now),
    (grant) => {
      const { pair, response } = newTokenPair({ user_id: grant.user_id!, application_id: client.id, scopes: grant.scopes, withRefreshToken: true, now, ttl: ctx.tokenTtl, auth_time: grant.auth_time });
      issued = { response, issuedFor: { user_id: grant.user_id!, application: client, scopes: grant.scopes, nonce: null, auth_time: grant.auth_time } };
      return pair;
    },
    now,
  );
  return wonOrThrow(outcome, issued);
}
