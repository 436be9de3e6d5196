// The id_token signing keys (domain/storage/signing-keys.ts) in the file store's `signing_keys` collection. One process
// owns the file, and each change is one synchronous commit, so adding the first key and rotating cannot interleave.
import type { SigningKeyRecord, SigningKeyStorage } from '../../domain/storage/index.js';
import type { Store } from './store.js';

const signingOf = (store: Store) => store.data.signing_keys.find((key) => key.retired_at === null);

/** The signing key first, then the most recently retired; a handful of keys at most, so sorting them is free. */
const newestFirst = (a: SigningKeyRecord, b: SigningKeyRecord) =>
  a.retired_at === b.retired_at ? b.created_at - a.created_at : a.retired_at === null ? -1 : b.retired_at === null ? 1 : b.retired_at - a.retired_at;

export function fileSigningKeyStorage(store: Store): SigningKeyStorage {
  return {
    async signing() {
      return signingOf(store);
    },
    async kept() {
      return [...store.data.signing_keys].sort(newestFirst);
    },
    addFirst(key) {
      return store.commit(() => signingOf(store) ?? store.insert('signing_keys', { ...key, retired_at: null }));
    },
    rotate(key, now, cutoff) {
      return store.commit(() => {
        const previous = signingOf(store);
        if (previous) store.update('signing_keys', previous, { retired_at: now });
        store.insert('signing_keys', { ...key, retired_at: null });
        store.remove('signing_keys', (k) => k.retired_at !== null && k.retired_at < cutoff);
        return { retiredKid: previous?.kid ?? null };
      });
    },
  };
}
