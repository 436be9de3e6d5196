// The token endpoint's single-use steps (domain/storage/grants.ts) on the file store: each decision and its writes
// happen in one synchronous commit, so no other request runs between the check and the write.
import type {
  AccessTokenRecord,
  GrantStorage,
  NewTokenPair,
  SingleUseOutcome,
  StoredCode,
  StoredRefresh,
  UserStanding,
} from '../../domain/storage/index.js';
import type { Store } from './store.js';

/** The file store's record of a new pair in the chain of `codeId` (null outside any chain). */
export function tokenRecordOf(pair: NewTokenPair, codeId: string | null): AccessTokenRecord {
  return {
    id: pair.id,
    token_digest: pair.token_digest,
    refresh_digest: pair.refresh_digest,
    application_id: pair.application_id,
    user_id: pair.user_id,
    scopes: [...pair.scopes],
    created_at: pair.now,
    expires_in: pair.ttl,
    revoked_at: null,
    code_id: codeId,
    auth_time: pair.auth_time,
  };
}

function standingOf(store: Store, userId: number): UserStanding {
  const user = store.lookup('users', 'id', userId);
  return user && { state: user.state };
}

export function fileGrantStorage(store: Store): GrantStorage {
  const revokeChain = (codeId: string, now: number) => {
    for (const t of store.data.access_tokens.filter((t) => t.code_id === codeId && t.revoked_at === null)) store.update('access_tokens', t, { revoked_at: now });
  };
  /**
   * What both operations do with a code or refresh token found unspent: the caller's check on it with its user's
   * standing, then spending it and issuing the next pair of its chain.
   */
  const checkAndIssue = <R extends { user_id: number }, E>(
    record: R,
    check: (stored: R & { user: UserStanding }) => E | undefined,
    pair: (stored: R & { user: UserStanding }) => NewTokenPair,
    spend: () => void,
    codeId: string | null,
  ): SingleUseOutcome<E> => {
    const stored = { ...record, user: standingOf(store, record.user_id) };
    const reason = check(stored);
    if (reason !== undefined) return { outcome: 'refused', reason };
    spend();
    store.insert('access_tokens', tokenRecordOf(pair(stored), codeId));
    return { outcome: 'issued' };
  };
  // Each operation's decision and its writes happen in one synchronous commit callback, which the event loop never
  // interleaves with another: that is this store's atomicity.
  return {
    redeemCode<E>(codeDigest: string, applicationId: number, check: (code: StoredCode) => E | undefined, pair: (code: StoredCode) => NewTokenPair, now: number) {
      return store.commit((): SingleUseOutcome<E> => {
        const code = store.lookup('authorization_codes', 'code_digest', codeDigest);
        if (!code || code.application_id !== applicationId) return { outcome: 'unknown' };
        if (code.used_at !== null) {
          revokeChain(code.id, now);
          return { outcome: 'replayed' };
        }
        return checkAndIssue(code, check, pair, () => store.update('authorization_codes', code, { used_at: now }), code.id);
      });
    },
    rotateRefresh<E>(refreshDigest: string, applicationId: number, check: (previous: StoredRefresh) => E | undefined, pair: (previous: StoredRefresh) => NewTokenPair, now: number) {
      return store.commit((): SingleUseOutcome<E> => {
        const previous = store.lookup('access_tokens', 'refresh_digest', refreshDigest);
        if (!previous || previous.application_id !== applicationId) return { outcome: 'unknown' };
        if (previous.revoked_at !== null) {
          if (previous.code_id === null) return { outcome: 'unknown' };
          revokeChain(previous.code_id, now);
          return { outcome: 'replayed' };
        }
        return checkAndIssue(previous, check, pair, () => store.update('access_tokens', previous, { revoked_at: now }), previous.code_id);
      });
    },
  };
}
