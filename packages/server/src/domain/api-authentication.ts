// Spec 5: an API call authenticates with an OAuth access token (query `access_token` or `Authorization: Bearer`)
// or a personal access token (`PRIVATE-TOKEN`). A token acts only for the user it was issued to.
import type { Account, Storage } from './storage/index.js';
import { isActive } from './users.js';
import type { PersonalAccessTokenRecord, Scope } from './storage/records.js';
import { findActivePersonalAccessToken } from './accounts.js';
import { findActiveAccessToken } from './oauth/tokens.js';

export interface PresentedApiCredentials {
  accessTokenQuery?: unknown;
  authorization?: string | undefined;
  privateToken?: string | undefined;
}

export interface ApiPrincipal extends Account {
  scopes: readonly Scope[];
  via: 'accessTokenQuery' | 'bearerAuth' | 'privateToken';
  /** The application the OAuth token was issued to; null for a personal access token and a clientless password grant. */
  applicationId: number | null;
  /** The personal access token the request was made with (`via: 'privateToken'`), for the calls about it. */
  personalAccessToken?: PersonalAccessTokenRecord;
}

/** `missing`: nothing was sent; `invalid`: something was sent and is not a usable token (RFC 6750 `invalid_token`). */
export type ApiAuthentication = { ok: true; principal: ApiPrincipal } | { ok: false; reason: 'missing' | 'invalid' };

function bearerToken(header: string | undefined): string | null | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  return match ? match[1]! : null;
}

export type PresentedAccessToken = { token: string; via: 'bearerAuth' | 'accessTokenQuery' } | 'missing' | 'invalid';

/**
 * The OAuth access token a request presents, in the header (RFC 6750 section 2.1) or the query (2.3): `missing`
 * when neither, `invalid` when one is malformed or the two are different tokens (section 2: one method at a time).
 */
export function presentedAccessToken(presented: Omit<PresentedApiCredentials, 'privateToken'>): PresentedAccessToken {
  const viaHeader = bearerToken(presented.authorization);
  const viaQuery = presented.accessTokenQuery;
  if (viaHeader === undefined && viaQuery === undefined) return 'missing';
  const tokens = [viaHeader, viaQuery].filter((t) => t !== undefined);
  if (tokens.some((t) => typeof t !== 'string' || t === '') || new Set(tokens).size > 1) return 'invalid';
  return { token: tokens[0] as string, via: viaHeader !== undefined ? 'bearerAuth' : 'accessTokenQuery' };
}

export async function authenticateApiRequest(storage: Storage, presented: PresentedApiCredentials, now: number): Promise<ApiAuthentication> {
  const oauth = presentedAccessToken(presented);
  const privateToken = presented.privateToken;
  if (oauth === 'missing' && privateToken === undefined) return { ok: false, reason: 'missing' };
  // A personal access token and an OAuth token together are two methods at once, refused like two OAuth tokens.
  if (oauth === 'invalid' || (oauth !== 'missing' && privateToken !== undefined)) return { ok: false, reason: 'invalid' };

  if (oauth === 'missing') {
    const pat = privateToken === '' ? null : await findActivePersonalAccessToken(storage, privateToken!, new Date(now * 1000));
    if (!pat) return { ok: false, reason: 'invalid' };
    return { ok: true, principal: { user: pat.user, globalSetting: pat.globalSetting, scopes: pat.record.scopes, via: 'privateToken', applicationId: null, personalAccessToken: pat.record } };
  }
  const found = await findActiveAccessToken(storage, oauth.token, now);
  if (!found) return { ok: false, reason: 'invalid' };
  return { ok: true, principal: { user: found.user, globalSetting: found.globalSetting, scopes: found.record.scopes, via: oauth.via, applicationId: found.record.application_id } };
}

/** Why a request may not act as the user its `Sudo` names: the service's status and message, or the scope it lacks. */
export type SudoRefusal = { status: 403 | 404; message: string } | { insufficientScope: 'sudo' };

/**
 * The service's `Sudo` header or `sudo` parameter (its `sudo!` helper): an administrator's token that holds the `sudo`
 * scope acts as the user it names, by id or username, with the token's scopes. Anyone else is refused: the service
 * answers a user who is no administrator before it looks at the token's scopes.
 */
export async function actAs(storage: Storage, principal: ApiPrincipal, identifier: string | undefined): Promise<ApiPrincipal | SudoRefusal> {
  if (identifier === undefined || identifier === '') return principal;
  if (!principal.user.is_admin) return { status: 403, message: '403 Forbidden - Must be admin to use sudo' };
  if (!principal.scopes.includes('sudo')) return { insufficientScope: 'sudo' };
  const user = /^[0-9]+$/.test(identifier) ? await storage.users.byId(Number(identifier)) : await storage.users.byUsername(identifier);
  if (!isActive(user)) return { status: 404, message: `404 User with ID or username '${identifier}' Not Found` };
  const globalSetting = await storage.notificationSettings.find({ user_id: user.id, source_type: 'global', source_id: null });
  return { ...principal, user, globalSetting };
}
