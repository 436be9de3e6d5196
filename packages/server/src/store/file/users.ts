// Users (domain/storage/users.ts) in the file store's `users` collection. A new user's names are checked in the commit
// that inserts it (inserts.ts), as seeding checks them.
import type { EpochSeconds, UserDeletion, UserStorage } from '../../domain/storage/index.js';
import { insertUser } from './inserts.js';
import type { Patch, Store } from './store.js';

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
    replaceVerifiedPasswordHash(id, verified, rehashed) {
      return store.commit(() => {
        const user = store.lookup('users', 'id', id);
        if (user?.password_hash !== verified) return false;
        store.update('users', user, { password_hash: rehashed });
        return true;
      });
    },
    async all() {
      return [...store.data.users].sort((a, b) => a.id - b.id);
    },
    setState(id, state) {
      return patch(store, id, { state });
    },
    setAdmin(id, isAdmin) {
      return patch(store, id, { is_admin: isAdmin });
    },
    setOtpSecret(id, otpSecret) {
      return patch(store, id, { two_factor_enabled: otpSecret !== null, otp_secret: otpSecret, otp_last_step: null });
    },
    delete(id, now) {
      return store.commit(() => deleteUser(store, id, now));
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

function patch(store: Store, id: number, changes: Patch<'users'>) {
  return store.commit(() => {
    const user = store.lookup('users', 'id', id);
    return user && store.update('users', user, changes);
  });
}

/** The same records as PostgreSQL's foreign keys take with the user (and what deleteUser there takes by hand). */
function deleteUser(store: Store, id: number, now: EpochSeconds): UserDeletion | undefined {
  const user = store.lookup('users', 'id', id);
  if (!user) return undefined;
  const owns = (members: readonly { user_id: number; access_level: number }[], who: (userId: number) => boolean) => members.some((m) => who(m.user_id) && m.access_level === 50);
  const soleOwnerOf = store.data.groups
    .filter((g) => owns(g.members, (u) => u === id) && !owns(g.members, (u) => u !== id))
    .map((g) => g.path)
    .sort();
  if (soleOwnerOf.length > 0) return { deleted: false, soleOwnerOf };

  const applications = new Set(store.data.applications.filter((a) => a.owner_id === id).map((a) => a.id));
  const personal = new Set(store.data.projects.filter((p) => p.group_id === null && p.namespace.toLowerCase() === user.username.toLowerCase()).map((p) => p.id));
  const events = new Set(store.data.notification_events.filter((e) => e.author_id === id || personal.has(e.project_id)).map((e) => e.id));
  store.remove('applications', (a) => applications.has(a.id));
  store.remove('authorization_codes', (c) => c.user_id === id || applications.has(c.application_id));
  store.remove('device_grants', (g) => g.user_id === id || applications.has(g.application_id));
  store.remove('access_tokens', (t) => t.user_id === id);
  for (const token of store.data.access_tokens.filter((t) => t.application_id !== null && applications.has(t.application_id) && t.revoked_at === null)) {
    store.update('access_tokens', token, { revoked_at: now });
  }
  store.remove('personal_access_tokens', (t) => t.user_id === id);
  store.remove('notification_settings', (s) => s.user_id === id || (s.source_type === 'project' && personal.has(s.source_id!)));
  store.remove('outbox', (m) => m.user_id === id || events.has(m.event_id));
  store.remove('notification_events', (e) => events.has(e.id));
  store.remove('projects', (p) => personal.has(p.id));
  for (const collection of ['groups', 'projects'] as const) {
    for (const entry of store.data[collection].filter((e) => e.members.some((m) => m.user_id === id))) {
      store.update(collection, entry, { members: entry.members.filter((m) => m.user_id !== id) });
    }
  }
  store.remove('users', (u) => u.id === id);
  return { deleted: true };
}
