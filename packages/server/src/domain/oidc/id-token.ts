// The id_token (OpenID Connect Core 1.0 section 2), as the service issues it: RS256 under the instance's signing key
// (signing-keys.ts), header `typ: JWT` and the key's `kid`, lifetime `--id-token-ttl` (120 s, the service's).
import type { components } from '@tokenbell/sdk';
import type { Storage } from '../storage/index.js';
import type { ApplicationRecord, Scope } from '../storage/records.js';
import { activeUser } from '../users.js';
import type { TokenResponse } from '../oauth/tokens.js';
import { type ClaimSettings, idTokenUserClaims } from './claims.js';
import { signingKey } from './signing-keys.js';

export interface IdTokenSettings extends ClaimSettings {
  /** Seconds from `iat` to `exp`. */
  idTokenTtl: number;
}

/** What a grant issued its tokens for: what an id_token says. */
export interface IssuedFor {
  user_id: number;
  /** Null for the password grant without client authentication: an id_token needs an audience, so it gets none. */
  application: ApplicationRecord | null;
  scopes: readonly Scope[];
  /** The authorization request's or the password grant's nonce; never on a refresh (Core 1.0 section 12.2). */
  nonce: string | null;
  /** When the user authenticated for the grant; null when unknown (pairs stored before OIDC). */
  auth_time: number | null;
}

/** A token response and what it was issued for. */
export interface IssuedGrant {
  response: TokenResponse;
  issuedFor: IssuedFor;
}

/** The signed id_token for a grant holding `openid`; undefined for any other (or without a client, or a user gone). */
export async function idTokenFor(storage: Storage, issued: IssuedFor, now: number, settings: IdTokenSettings): Promise<string | undefined> {
  if (!issued.scopes.includes('openid') || !issued.application) return undefined;
  const user = await activeUser(storage.users, issued.user_id);
  if (!user) return undefined;
  const claims: components['schemas']['IdTokenClaims'] = {
    iss: settings.issuer,
    aud: issued.application.uid,
    exp: now + settings.idTokenTtl,
    iat: now,
    ...(issued.auth_time === null ? {} : { auth_time: issued.auth_time }),
    ...(issued.nonce === null ? {} : { nonce: issued.nonce }),
    ...(await idTokenUserClaims(storage, user, issued.scopes, settings)),
  };
  const key = await signingKey(storage, now);
  // jose (some forty modules) is loaded by the first id_token, not by every start.
  const { SignJWT } = await import('jose');
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: key.kid }).sign(key.privateKey);
}

/** The grant's token response, with its id_token when the grant holds `openid`. */
export async function withIdToken(storage: Storage, issued: IssuedGrant, now: number, settings: IdTokenSettings): Promise<TokenResponse> {
  const id_token = await idTokenFor(storage, issued.issuedFor, now, settings);
  // The same object, completed: it is the key under which tokens.ts remembers its access token's digest.
  return id_token === undefined ? issued.response : Object.assign(issued.response, { id_token });
}
