// Personal access tokens (domain/storage/tokens.ts) in the file store's `personal_access_tokens` collection. A token
// is found by its digest with its user and the user's global setting, the three things a request authenticated by it
// needs.
import type { PersonalAccessTokenStorage } from '../../domain/storage/index.js';
import { insertPersonalAccessToken } from './inserts.js';
import { findSetting } from './notification-settings.js';
import type { Store } from './store.js';

export function filePersonalAccessTokenStorage(store: Store): PersonalAccessTokenStorage {
  return {
    async withUserByDigest(tokenDigest) {
      const token = store.lookup('personal_access_tokens', 'token_digest', tokenDigest);
      const user = token && store.lookup('users', 'id', token.user_id);
      return token && user ? { token, user, globalSetting: findSetting(store, user.id, 'global', null) } : undefined;
    },
    async ofUser(userId) {
      return store.data.personal_access_tokens.filter((t) => t.user_id === userId).reverse();
    },
    create(token) {
      return store.commit(() => insertPersonalAccessToken(store, token));
    },
    revokeOwned(userId, id) {
      return store.commit(() => {
        const record = store.lookup('personal_access_tokens', 'id', id);
        if (!record || record.user_id !== userId) return null;
        return record.revoked ? record : store.update('personal_access_tokens', record, { revoked: true });
      });
    },
  };
}
