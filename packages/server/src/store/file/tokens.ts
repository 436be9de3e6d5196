// OAuth access and refresh tokens (domain/storage/tokens.ts) in the file store's `access_tokens` collection, one record
// a pair. Revoking a user's authorization of an application takes its unused codes and the device authorizations the
// user approved in the same commit, so none of them can be redeemed afterwards.
import type { DeviceGrantRecord, TokenStorage } from '../../domain/storage/index.js';
import { tokenRecordOf } from './grants.js';
import { findSetting } from './notification-settings.js';
import type { Store } from './store.js';

export function fileTokenStorage(store: Store): TokenStorage {
  return {
    async issue(pair) {
      await store.commit(() => store.insert('access_tokens', tokenRecordOf(pair, null)));
    },
    async byAccessDigest(tokenDigest) {
      return store.lookup('access_tokens', 'token_digest', tokenDigest);
    },
    async withUserByAccessDigest(tokenDigest) {
      const token = store.lookup('access_tokens', 'token_digest', tokenDigest);
      const user = token && store.lookup('users', 'id', token.user_id);
      return token && user ? { token, user, globalSetting: findSetting(store, user.id, 'global', null) } : undefined;
    },
    async byRefreshDigest(refreshDigest) {
      return store.lookup('access_tokens', 'refresh_digest', refreshDigest);
    },
    async revoke(id, now) {
      await store.commit(() => {
        const record = store.lookup('access_tokens', 'id', id);
        if (record && record.revoked_at === null) store.update('access_tokens', record, { revoked_at: now });
      });
    },
    async unrevokedOfUser(userId) {
      return store.data.access_tokens.filter((t) => t.user_id === userId && t.revoked_at === null);
    },
    revokeAuthorization(userId, applicationId, now) {
      return store.commit(() => {
        const mine = (r: { user_id: number | null; application_id: number | null }) => r.user_id === userId && r.application_id === applicationId;
        const tokens = store.data.access_tokens.filter((t) => mine(t) && t.revoked_at === null);
        const hasCodes = store.data.authorization_codes.some((c) => mine(c) && c.used_at === null && c.expires_at > now);
        // A device the user approved that has not polled yet would otherwise get tokens after the revocation.
        const approved = (g: DeviceGrantRecord) => mine(g) && g.decision === 'approved' && g.redeemed_at === null;
        const hasDevices = store.data.device_grants.some((g) => approved(g) && g.expires_at > now);
        for (const token of tokens) store.update('access_tokens', token, { revoked_at: now });
        store.remove('authorization_codes', mine);
        store.remove('device_grants', approved);
        return tokens.length > 0 || hasCodes || hasDevices;
      });
    },
  };
}
