// Authorization codes (domain/storage/tokens.ts) in the file store's `authorization_codes` collection. Only creating
// one is here: redeeming it is the token endpoint's single-use step (grants.ts).
import type { AuthorizationCodeStorage } from '../../domain/storage/index.js';
import type { Store } from './store.js';

export function fileAuthorizationCodeStorage(store: Store): AuthorizationCodeStorage {
  return {
    async create(code) {
      await store.commit(() => store.insert('authorization_codes', code));
    },
  };
}
