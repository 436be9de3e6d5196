// The keys that sign OpenID Connect id_tokens, as the domain asks for them (domain/oidc/signing-keys.ts). Every
// instance on a store signs with its one signing key, so the two changes of the set are the store's to make atomic:
// the first key, which instances starting together race to add, and a rotation, which two operators may start at once.
import type { EpochSeconds, SigningKeyRecord } from './records.js';

/** A key as it enters the store: not retired. */
export type NewSigningKey = Omit<SigningKeyRecord, 'retired_at'>;

export interface SigningKeyStorage {
  /** Every key kept (next, signing and retired), the newest first: by `signs_from`, latest first. */
  kept(): Promise<SigningKeyRecord[]>;
  /**
   * Adds `key` unless the store has a key not retired already, and answers that key either way: of several instances
   * adding their first key at once, exactly one wins, and every one of them gets the winner's.
   */
  addFirst(key: NewSigningKey): Promise<SigningKeyRecord>;
  /**
   * In one step: retires at `key.signs_from` every key not retired by then (so the timeline has no gap and no overlap:
   * the key before hands over as `key` begins), adds `key`, and drops the keys retired at or before `cutoff`; answers
   * the kid of the key `key` takes over from (the one that was not retired; null when there was none) and those dropped.
   * Rotations made at once take turns, so each takes over from the key the previous one made.
   */
  rotate(key: NewSigningKey, cutoff: EpochSeconds): Promise<{ retiredKid: string | null; droppedKids: string[] }>;
}
