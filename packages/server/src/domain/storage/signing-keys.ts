// The keys that sign OpenID Connect id_tokens, as the domain asks for them (domain/oidc/signing-keys.ts). Every
// instance on a store signs with its one signing key, so the two changes of the set are the store's to make atomic:
// the first key, which instances starting together race to add, and a rotation, which two operators may start at once.
import type { EpochSeconds, SigningKeyRecord } from './records.js';

/** A key as it enters the store: signing, so not retired. */
export type NewSigningKey = Omit<SigningKeyRecord, 'retired_at'>;

export interface SigningKeyStorage {
  /** The key that signs now (the one not retired); undefined while the store has no key. */
  signing(): Promise<SigningKeyRecord | undefined>;
  /** Every key kept: the signing one first, then the retired ones, the most recently retired first. */
  kept(): Promise<SigningKeyRecord[]>;
  /**
   * Adds `key` as the signing key unless the store has one already, and answers the signing key either way: of
   * several instances adding their first key at once, exactly one wins, and every one of them gets the winner's.
   */
  addFirst(key: NewSigningKey): Promise<SigningKeyRecord>;
  /**
   * In one step: retires the signing key at `now`, makes `key` the signing one, and drops the keys retired before
   * `cutoff`; answers the kid of the key it retired (null when there was none). Rotations made at once take turns,
   * so each retires the key the previous one made, and one key signs afterwards.
   */
  rotate(key: NewSigningKey, now: EpochSeconds, cutoff: EpochSeconds): Promise<{ retiredKid: string | null }>;
}
