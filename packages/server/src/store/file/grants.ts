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
  const insertPair = (pair: NewTokenPair, codeId: string | null) => store.insert('access_tokens', tokenRecordOf(pair, codeId));
  // Each operation's decision and its writes happen in one synchronous commit callback, which the event loop never
  // interleaves with another: that is this store's atomicity.
  return {
    async redeemCode<E>(codeDigest: string, applicationId: number, check: (code: StoredCode) => E | undefined, pair: (code: StoredCode) => NewTokenPair, now: number) {
      let result: SingleUseOutcome<E> = { outcome: 'unknown' };
      await store.commit(() => {
        const code = store.lookup('authorization_codes', 'code_digest', codeDigest);
        if (!code || code.application_id !== applicationId) return;
        if (code.used_at !== null) {
          revokeChain(code.id, now);
          result = { outcome: 'replayed' };
          return;
        }
        const stored = { ...code, user: standingOf(store, code.user_id) };
        const reason = check(stored);
        if (reason !== undefined) {
          result = { outcome: 'refused', reason };
          return;
        }
        store.update('authorization_codes', code, { used_at: now });
        insertPair(pair(stored), code.id);
        result = { outcome: 'issued' };
      });
      return result;
    },
    async rotateRefresh<E>(refreshDigest: string, applicationId: number, check: (previous: StoredRefresh) => E | undefined, pair: (previous: StoredRefresh) => NewTokenPair, now: number) {
      let result: SingleUseOutcome<E> = { outcome: 'unknown' };
      await store.commit(() => {
        const previous = store.lookup('access_tokens', 'refresh_digest', refreshDigest);
        if (!previous || previous.application_id !== applicationId) return;
        if (previous.revoked_at !== null) {
          if (previous.code_id === null) return;
          revokeChain(previous.code_id, now);
          result = { outcome: 'replayed' };
          return;
        }
        const stored = { ...previous, user: standingOf(store, previous.user_id) };
        const reason = check(stored);
        if (reason !== undefined) {
          result = { outcome: 'refused', reason };
          return;
        }
        store.update('access_tokens', previous, { revoked_at: now });
        insertPair(pair(stored), previous.code_id);
        result = { outcome: 'issued' };
      });
      return result;
    },
  };
}
