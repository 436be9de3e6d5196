// The claims OpenID Connect releases about a user, as the service releases them (its doorkeeper_openid_connect
// initializer): all of them with `openid`; `profile` adds nothing; `email` adds the address. The id_token and the
// userinfo answer share most of them and differ in the groups: the id_token names the groups of direct membership
// (`groups_direct`), userinfo every group (`groups`) and, per role, those held at exactly that role.
import { createHash } from 'node:crypto';
import type { components } from '@tokenbell/sdk';
import type { Storage } from '../storage/index.js';
import type { Scope, UserRecord } from '../storage/records.js';
import { presentUser } from '../users.js';

type Schemas = components['schemas'];
type CommonClaims = Pick<Schemas['UserInfo'], 'sub' | 'sub_legacy' | 'name' | 'nickname' | 'preferred_username' | 'email' | 'email_verified' | 'website' | 'profile' | 'picture'>;

export interface ClaimSettings {
  /** The instance's base URL: the issuer, and the origin of `profile` and `picture`. */
  issuer: string;
  /** A secret of the instance (every instance on one database shares it), for `sub_legacy`. */
  instanceSecret: string;
}

/** Access levels as the service numbers them, for the role claims. */
const roleClaims = [
  ['https://gitlab.org/claims/groups/owner', 50],
  ['https://gitlab.org/claims/groups/maintainer', 40],
  ['https://gitlab.org/claims/groups/developer', 30],
] as const;

/**
 * The service hashed the user's id with its secret_key_base for `sub` once, and keeps that value as `sub_legacy`
 * for clients that stored it; tokenbell hashes with a key derived for this one use from the instance's secret.
 */
export function legacySubject(userId: number, instanceSecret: string): string {
  const key = createHash('sha256').update(`tokenbell sub_legacy\0${instanceSecret}`).digest('hex');
  return createHash('sha256').update(`${userId}-${key}`).digest('hex');
}

function commonClaims(user: UserRecord, scopes: readonly Scope[], settings: ClaimSettings): CommonClaims {
  const shown = presentUser(user, settings.issuer);
  return {
    sub: String(user.id),
    sub_legacy: legacySubject(user.id, settings.instanceSecret),
    name: user.name,
    nickname: user.username,
    preferred_username: user.username,
    // Without `email` the service answers the user's public address; tokenbell users have none, so nothing.
    ...(scopes.includes('email') ? { email: user.email, email_verified: true as const } : {}),
    // tokenbell users have no website; the claim is named in the document for clients that read it.
    profile: shown.web_url,
    ...(shown.avatar_url ? { picture: shown.avatar_url } : {}),
  };
}

/** The user's claims for an id_token, without the token's own (iss, aud, exp, iat, auth_time, nonce). */
export async function idTokenUserClaims(
  storage: Storage,
  user: UserRecord,
  scopes: readonly Scope[],
  settings: ClaimSettings,
): Promise<CommonClaims & Pick<Schemas['IdTokenClaims'], 'groups_direct'>> {
  const memberships = await storage.namespaces.groupMembershipsOf(user.id);
  return { ...commonClaims(user, scopes, settings), groups_direct: memberships.map((m) => m.path) };
}

/** The userinfo answer. */
export async function userInfoClaims(storage: Storage, user: UserRecord, scopes: readonly Scope[], settings: ClaimSettings): Promise<Schemas['UserInfo']> {
  const memberships = await storage.namespaces.groupMembershipsOf(user.id);
  const byRole: Partial<Record<(typeof roleClaims)[number][0], string[]>> = {};
  for (const [claim, level] of roleClaims) {
    const paths = memberships.filter((m) => m.access_level === level).map((m) => m.path);
    if (paths.length > 0) byRole[claim] = paths;
  }
  return { ...commonClaims(user, scopes, settings), groups: memberships.map((m) => m.path), ...byRole };
}
