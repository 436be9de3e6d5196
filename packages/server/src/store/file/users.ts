// Users (domain/storage/users.ts) in the file store's `users` collection. A new user's names are checked in the commit
// that inserts it (inserts.ts), as seeding checks them.
import type { UserStorage } from '../../domain/storage/index.js';
import { insertUser } from './inserts.js';
import type { Store } from './store.js';

export function fileUserStorage(store: Store): UserStorage {
  return {
    async byId(id) {
      return store.lookup('users', 'id', id);
    },
    async byUsername(username) {
      return store.lookup('users', 'username', username);
    },
    async byLogin(login) {
      return store.lookup('users', 'username', login) ?? store.lookup('users', 'email', login);
    },
    async any() {
      return store.data.users.length > 0;
    },
    create(user) {
      return store.commit(() => insertUser(store, user));
    },
    async setPasswordHash(id, passwordHash) {
      return store.commit(() => {
        const user = store.lookup('users', 'id', id);
        return user && store.update('users', user, { password_hash: passwordHash });
      });
    },
    spendOtpStep(id, step) {
      return store.commit(() => {
        const user = store.lookup('users', 'id', id);
        if (!user || user.state !== 'active' || (user.otp_last_step != null && step <= user.otp_last_step)) return false;
        store.update('users', user, { otp_last_step: step });
        return true;
      });
    },
  };
}
