// Spec 5: an API call authenticates with an OAuth access token (query `access_token` or `Authorization: Bearer`)
// or a personal access token (`PRIVATE-TOKEN`). A token acts only for the user it was issued to.
import type { Store } from '../store/file-store.js';
import type { Scope, UserRecord } from '../store/schema.js';
import { findActivePersonalAccessToken } from './accounts.js';
import { findActiveAccessToken } from './oauth/tokens.js';

export interface PresentedApiCredentials {
  accessTokenQuery?: unknown;
  authorization?: string | undefined;
  privateToken?: string | undefined;
}

export interface ApiPrincipal {
  user: UserRecord;
  scopes: readonly Scope[];
  via: 'accessTokenQuery' | 'bearerAuth' | 'privateToken';
}

/** `missing`: nothing was sent; `invalid`: something was sent and is not a usable token (RFC 6750 `invalid_token`). */
export type ApiAuthentication = { ok: true; principal: ApiPrincipal } | { ok: false; reason: 'missing' | 'invalid' };

function bearerToken(header: string | undefined): string | null | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  return match ? match[1]! : null;
}

export function authenticateApiRequest(store: Store, presented: PresentedApiCredentials, now: number): ApiAuthentication {
  const viaHeader = bearerToken(presented.authorization);
  const viaQuery = presented.accessTokenQuery;
  const privateToken = presented.privateToken;
  if (viaHeader === undefined && viaQuery === undefined && privateToken === undefined) return { ok: false, reason: 'missing' };
  // Several methods at once must all agree on one token; two different tokens are refused (RFC 6750 section 2).
  const oauthTokens = [viaHeader, viaQuery].filter((t) => t !== undefined);
  if (oauthTokens.some((t) => typeof t !== 'string' || t === '')) return { ok: false, reason: 'invalid' };
  if (new Set(oauthTokens).size > 1 || (oauthTokens.length > 0 && privateToken !== undefined)) return { ok: false, reason: 'invalid' };

  const nowSeconds = now;
  if (privateToken !== undefined) {
    const pat = privateToken === '' ? undefined : findActivePersonalAccessToken(store, privateToken, new Date(nowSeconds * 1000));
    const user = pat && store.lookup('users', 'id', pat.user_id);
    if (!pat || !user || user.state !== 'active') return { ok: false, reason: 'invalid' };
    return { ok: true, principal: { user, scopes: pat.scopes, via: 'privateToken' } };
  }
  const token = oauthTokens[0] as string;
  const record = findActiveAccessToken(store, token, nowSeconds);
  const user = record && store.lookup('users', 'id', record.user_id);
  if (!record || !user) return { ok: false, reason: 'invalid' };
  return { ok: true, principal: { user, scopes: record.scopes, via: viaHeader !== undefined ? 'bearerAuth' : 'accessTokenQuery' } };
}
