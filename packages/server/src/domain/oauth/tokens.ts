// Access and refresh tokens: issued in pairs, found by the SHA-256 digest index, revoked as a pair.
import { nanoid } from 'nanoid';
import type { components } from '@tokenbell/sdk';
import type { Account, Storage } from '../storage/index.js';
import type { AccessTokenRecord, Scope } from '../storage/records.js';
import { digest, newSecret } from '../secrets.js';
import { formatScope } from './scopes.js';
import { isActive } from '../users.js';
import type { NewTokenPair } from '../storage/index.js';

export type TokenResponse = components['schemas']['TokenResponse'];

export interface IssueTokenOptions {
  user_id: number;
  application_id: number | null;
  scopes: readonly Scope[];
  withRefreshToken: boolean;
  now: number;
  ttl: number;
  /** When the user authenticated for this grant (the id_token's `auth_time`); null when not known. */
  auth_time?: number | null;
}

/**
 * A new token pair: the plain tokens, only in the token response, and the pair as stored, by digests. The one place
 * tokens are made.
 */
export function newTokenPair(options: IssueTokenOptions): { pair: NewTokenPair; response: TokenResponse } {
  const access_token = newSecret('accessToken');
  const refresh_token = options.withRefreshToken ? newSecret('refreshToken') : undefined;
  const token_digest = digest(access_token);
  const response: TokenResponse = {
    access_token,
    token_type: 'bearer',
    expires_in: options.ttl,
    ...(refresh_token ? { refresh_token } : {}),
    scope: formatScope(options.scopes),
    created_at: options.now,
  };
  accessDigests.set(response, token_digest);
  return {
    pair: {
      id: nanoid(),
      token_digest,
      refresh_digest: refresh_token ? digest(refresh_token) : null,
      application_id: options.application_id,
      user_id: options.user_id,
      scopes: options.scopes,
      now: options.now,
      ttl: options.ttl,
      auth_time: options.auth_time ?? null,
    },
    response,
  };
}

/** The digests of the access tokens in the token responses made here, so that a request digests each token once. */
const accessDigests = new WeakMap<TokenResponse, string>();

/** The digest of a token response's access token, as the store keeps it. */
export const accessDigestOf = (response: TokenResponse): string => accessDigests.get(response) ?? digest(response.access_token);

/** Issues a token pair outside any chain (the password grant); answers the token response. */
export async function issueTokenPair(storage: Storage, options: IssueTokenOptions): Promise<TokenResponse> {
  const { pair, response } = newTokenPair(options);
  await storage.tokens.issue(pair);
  return response;
}

export const isExpired = (record: AccessTokenRecord, now: number) => now >= record.created_at + record.expires_in;

/** The record of an access token that may be used now, with its user. */
export async function findActiveAccessToken(storage: Storage, token: string, now: number): Promise<({ record: AccessTokenRecord } & Account) | undefined> {
  const found = await storage.tokens.withUserByAccessDigest(digest(token));
  if (!found || found.token.revoked_at !== null || isExpired(found.token, now) || !isActive(found.user)) return undefined;
  return { record: found.token, user: found.user, globalSetting: found.globalSetting };
}


