// The id_token signing keys (domain/storage/signing-keys.ts) in the file store's `signing_keys` collection. One process
// owns the file, and each change is one synchronous commit, so adding the first key and rotating cannot interleave.
import type { SigningKeyRecord, SigningKeyStorage } from '../../domain/storage/index.js';
import type { Store } from './store.js';

const newestOf = (store: Store) => store.data.signing_keys.find((key) => key.retired_at === null);

/** A handful of keys at most, so sorting them is free; the kid breaks ties, as PostgreSQL's ORDER BY does. */
const newestFirst = (a: SigningKeyRecord, b: SigningKeyRecord) => b.signs_from - a.signs_from || (a.kid < b.kid ? -1 : a.kid > b.kid ? 1 : 0);

export function fileSigningKeyStorage(store: Store): SigningKeyStorage {
  return {
    async kept() {
      return [...store.data.signing_keys].sort(newestFirst);
    },
    addFirst(key) {
      return store.commit(() => newestOf(store) ?? store.insert('signing_keys', { ...key, retired_at: null }));
    },
    rotate(key, cutoff) {
      return store.commit(() => {
        const previous = newestOf(store);
        for (const handing of store.data.signing_keys.filter((k) => k.retired_at === null || k.retired_at > key.signs_from)) {
          store.update('signing_keys', handing, { retired_at: key.signs_from });
        }
        store.insert('signing_keys', { ...key, retired_at: null });
        const dropped = store.remove('signing_keys', (k) => k.retired_at !== null && k.retired_at <= cutoff);
        return { retiredKid: previous?.kid ?? null, droppedKids: dropped.map((k) => k.kid) };
      });
    },
  };
}
