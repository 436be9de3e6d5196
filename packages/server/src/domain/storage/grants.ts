// The two single-use steps of the token endpoint, each one atomic store operation that says whether this caller won
// (RFC 6749 sections 4.1.2 and 10.4, RFC 9700 section 4.14.2): redeeming an authorization code and rotating a
// refresh token. The domain's checks are passed in and run on the stored version inside the operation, so a failed
// check burns nothing and a concurrent winner is always seen. A used code, or a rotated refresh token coming back,
// means it leaked: the whole chain issued from the code is revoked.
import type { AccessTokenRecord, AuthorizationCodeRecord, Scope, UserRecord } from './records.js';

/** A token pair to store, by digests only (the plain tokens go to the client and nowhere else). */
export interface NewTokenPair {
  id: string;
  token_digest: string;
  refresh_digest: string | null;
  application_id: number | null;
  user_id: number;
  scopes: readonly Scope[];
  /** Epoch seconds. */
  now: number;
  ttl: number;
  /** When the user authenticated for the grant (the id_token's `auth_time`); null when unknown. */
  auth_time: number | null;
}

/**
 * `user`: the standing of the user it was issued to (undefined when they are gone), read in the same operation; whether
 * they may still act is the domain's rule, applied by the check.
 */
export type UserStanding = Pick<UserRecord, 'state'> | undefined;
export type StoredCode = Pick<AuthorizationCodeRecord, 'id' | 'application_id' | 'user_id' | 'redirect_uri' | 'scopes' | 'code_challenge' | 'expires_at' | 'nonce' | 'auth_time'> & { user: UserStanding };
export type StoredRefresh = Pick<AccessTokenRecord, 'id' | 'application_id' | 'user_id' | 'scopes' | 'code_id' | 'auth_time'> & { user: UserStanding };

export type SingleUseOutcome<E> =
  | { outcome: 'issued' }
  /** `check` refused; nothing changed. */
  | { outcome: 'refused'; reason: E }
  /** Already used (or rotated): the chain issued from its code is now revoked. */
  | { outcome: 'replayed' }
  /** No such code or refresh token, or not this client's: nothing changed. */
  | { outcome: 'unknown' };

export interface GrantStorage {
  /**
   * Redeems the code with this digest for the client `applicationId`: unknown or another client's → 'unknown';
   * used before → the chain is revoked, 'replayed'; `check` refuses → 'refused'; otherwise it is marked used and
   * `pair(code)` is stored in its chain → 'issued'.
   */
  redeemCode<E>(codeDigest: string, applicationId: number, check: (code: StoredCode) => E | undefined, pair: (code: StoredCode) => NewTokenPair, nowSeconds: number): Promise<SingleUseOutcome<E>>;
  /**
   * Rotates the refresh token with this digest for the client `applicationId`: unknown or another client's →
   * 'unknown'; revoked (rotated or revoked) and from a code → the chain is revoked, 'replayed'; `check` refuses →
   * 'refused'; otherwise the old pair is revoked and `pair(previous)` stored in the same chain → 'issued'.
   */
  rotateRefresh<E>(refreshDigest: string, applicationId: number, check: (previous: StoredRefresh) => E | undefined, pair: (previous: StoredRefresh) => NewTokenPair, nowSeconds: number): Promise<SingleUseOutcome<E>>;
}
