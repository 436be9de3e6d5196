// What the domain asks of credentials: personal access tokens, authorization codes and OAuth token pairs.
import type { AccessTokenRecord, AuthorizationCodeRecord, EpochSeconds, NotificationSettingRecord, PersonalAccessTokenRecord, UserRecord } from './records.js';
import type { NewTokenPair } from './grants.js';

export type NewPersonalAccessTokenRow = Omit<PersonalAccessTokenRecord, 'id'>;

/**
 * A user as an API call meets them: the account, and its global notification setting (undefined until one is stored),
 * which the API's most frequent call answers and the service keeps with the account.
 */
export interface Account {
  user: UserRecord;
  globalSetting: NotificationSettingRecord | undefined;
}

export interface PersonalAccessTokenStorage {
  /** The token and its user's account, in one question: every API call with a personal access token asks it. */
  withUserByDigest(tokenDigest: string): Promise<({ token: PersonalAccessTokenRecord } & Account) | undefined>;
  /** The user's tokens, newest first. */
  ofUser(userId: number): Promise<PersonalAccessTokenRecord[]>;
  /** Throws InputError `taken` when the digest is in use. */
  create(token: NewPersonalAccessTokenRow): Promise<PersonalAccessTokenRecord>;
  /** Revokes the user's token; the record as it now is, or null when the user has no such token. */
  revokeOwned(userId: number, id: number): Promise<PersonalAccessTokenRecord | null>;
}

export interface AuthorizationCodeStorage {
  create(code: AuthorizationCodeRecord): Promise<void>;
}

export interface TokenStorage {
  /** Stores a pair outside any chain (the password grant). */
  issue(pair: NewTokenPair): Promise<void>;
  byAccessDigest(tokenDigest: string): Promise<AccessTokenRecord | undefined>;
  /** The pair and the account of the user it was issued to, in one question: every API call asks it. */
  withUserByAccessDigest(tokenDigest: string): Promise<({ token: AccessTokenRecord } & Account) | undefined>;
  byRefreshDigest(refreshDigest: string): Promise<AccessTokenRecord | undefined>;
  /** Revokes the pair (a no-op when it is revoked already). */
  revoke(id: string, now: EpochSeconds): Promise<void>;
  /** The user's pairs not revoked, oldest first. */
  unrevokedOfUser(userId: number): Promise<AccessTokenRecord[]>;
  /**
   * Revokes what the application (null: the password grant without a client) holds for the user and drops its codes
   * and the device authorizations the user approved for it that are not redeemed yet; answers whether there was
   * anything: a pair not revoked, or a code or approved device authorization unused and unexpired at `now`.
   */
  revokeAuthorization(userId: number, applicationId: number | null, now: EpochSeconds): Promise<boolean>;
}
