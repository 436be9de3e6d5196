// Browser sessions (domain/storage/sessions.ts) in the file store's `sessions` collection.
import type { SessionStorage, StoredSession } from '../../domain/storage/index.js';
import type { Store } from './store.js';

/** The file store keeps times in whole seconds; a session may outlive its expiry by less than one. */
const toSeconds = (ms: number) => Math.ceil(ms / 1000);

export function fileSessionStorage(store: Store): SessionStorage {
  return {
    async find(sidDigest, nowMs) {
      const record = store.lookup('sessions', 'sid_digest', sidDigest);
      // A copy: the caller changes the object it gets, and records change only inside `commit`.
      return record && record.expires_at * 1000 > nowMs ? (structuredClone(record.session) as StoredSession) : null;
    },
    save(sidDigest, session, expiresMs) {
      return store.commit(() => {
        const record = store.lookup('sessions', 'sid_digest', sidDigest);
        if (record) store.update('sessions', record, { session, expires_at: toSeconds(expiresMs) });
        else store.insert('sessions', { sid_digest: sidDigest, session, expires_at: toSeconds(expiresMs) });
      });
    },
    async refresh(sidDigest, cookie, expiresMs) {
      if (!store.lookup('sessions', 'sid_digest', sidDigest)) return;
      await store.commit(() => {
        // Looked up again inside the commit: the session may have ended meanwhile.
        const record = store.lookup('sessions', 'sid_digest', sidDigest);
        if (record) store.update('sessions', record, { session: { ...record.session, cookie }, expires_at: toSeconds(expiresMs) });
      });
    },
    remove(sidDigest) {
      return store.commit(() => {
        store.remove('sessions', (s) => s.sid_digest === sidDigest);
      });
    },
    endAllOf(userId) {
      const of = (session: StoredSession) => session.userId === userId || (session.twoFactor as { userId?: unknown } | undefined)?.userId === userId;
      return store.commit(() => store.remove('sessions', (s) => of(s.session as StoredSession)).length);
    },
  };
}
