// Access and refresh tokens: issued in pairs, found by the SHA-256 digest index, revoked as a pair.
import { nanoid } from 'nanoid';
import type { components } from '@tokenbell/sdk';
import type { Store } from '../../store/file-store.js';
import type { AccessTokenRecord, Scope } from '../../store/schema.js';
import { digest, newSecret } from '../secrets.js';
import { formatScope } from './scopes.js';
import { activeUser } from '../users.js';

export type TokenResponse = components['schemas']['TokenResponse'];

export interface IssueTokenOptions {
  user_id: number;
  application_id: number | null;
  scopes: readonly Scope[];
  withRefreshToken: boolean;
  code_id: string | null;
  now: number;
  ttl: number;
}

/** Adds a token pair to the store; call inside `store.commit`. Answers the token response, the only place the plain tokens exist. */
export function insertTokenPair(store: Store, options: IssueTokenOptions): TokenResponse {
  const access_token = newSecret('accessToken');
  const refresh_token = options.withRefreshToken ? newSecret('refreshToken') : undefined;
  store.insert('accessTokens', {
    id: nanoid(),
    tokenDigest: digest(access_token),
    refreshDigest: refresh_token ? digest(refresh_token) : null,
    application_id: options.application_id,
    user_id: options.user_id,
    scopes: options.scopes,
    created_at: options.now,
    expires_in: options.ttl,
    revoked_at: null,
    code_id: options.code_id,
  });
  return {
    access_token,
    token_type: 'bearer',
    expires_in: options.ttl,
    ...(refresh_token ? { refresh_token } : {}),
    scope: formatScope(options.scopes),
    created_at: options.now,
  };
}

export const isExpired = (record: AccessTokenRecord, now: number) => now >= record.created_at + record.expires_in;

/** The record of an access token that may be used now. */
export function findActiveAccessToken(store: Store, token: string, now: number): AccessTokenRecord | undefined {
  const record = store.lookup('accessTokens', 'tokenDigest', digest(token));
  if (!record || record.revoked_at !== null || isExpired(record, now)) return undefined;
  return activeUser(store, record.user_id) ? record : undefined;
}

/** The record of a refresh token that may be used now (refresh tokens do not expire; revocation ends them). */
export function findActiveRefreshToken(store: Store, token: string): AccessTokenRecord | undefined {
  const record = store.lookup('accessTokens', 'refreshDigest', digest(token));
  return record && record.revoked_at === null ? record : undefined;
}

/** Revokes every token descended from one authorization code; call inside `store.commit`. */
export function revokeCodeChain(store: Store, codeId: string, now: number): void {
  for (const t of store.data.accessTokens.filter((t) => t.code_id === codeId && t.revoked_at === null)) {
    store.update('accessTokens', t, { revoked_at: now });
  }
}
