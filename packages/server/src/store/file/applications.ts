// OAuth applications (domain/storage/applications.ts) in the file store's `applications` collection. Deleting one
// takes its codes and device authorizations and revokes its tokens in the same commit, so no grant outlives the application.
import type { ApplicationStorage } from '../../domain/storage/index.js';
import { insertApplication } from './inserts.js';
import type { Store } from './store.js';

export function fileApplicationStorage(store: Store): ApplicationStorage {
  return {
    async byId(id) {
      return store.lookup('applications', 'id', id);
    },
    async byUid(uid) {
      return store.lookup('applications', 'uid', uid);
    },
    async ownedBy(ownerId) {
      return store.data.applications.filter((a) => a.owner_id === ownerId);
    },
    create(application) {
      return store.commit(() => insertApplication(store, application));
    },
    deleteOwned(ownerId, id, now) {
      return store.commit(() => {
        const application = store.lookup('applications', 'id', id);
        if (!application || application.owner_id !== ownerId) return false;
        store.remove('applications', (a) => a.id === id);
        store.remove('authorization_codes', (c) => c.application_id === id);
        store.remove('device_grants', (g) => g.application_id === id);
        for (const token of store.data.access_tokens.filter((t) => t.application_id === id && t.revoked_at === null)) {
          store.update('access_tokens', token, { revoked_at: now });
        }
        return true;
      });
    },
  };
}
