// What the device authorization grant (RFC 8628) asks of storage: a device authorization is made by the device
// authorization endpoint, found by its user code for the verification page, answered once by a user, and redeemed
// once by the device's poll. Answering and polling are each one atomic store operation, with the domain's rules passed
// in and applied to the stored version inside it (as the token endpoint's single-use steps in grants.ts), so two
// answers, or two polls, racing for one device authorization cannot both win.
import type { DeviceGrantRecord, EpochSeconds } from './records.js';
import type { NewTokenPair, UserStanding } from './grants.js';

/** A device authorization as a poll meets it, with the standing of the user who answered (undefined if none or gone). */
export type StoredDeviceGrant = DeviceGrantRecord & { user: UserStanding };

/** What the domain makes of a poll, judged on the stored device authorization. */
export type DevicePollStep<E> =
  /** Answer `reason` and change nothing: the poll came too early, or the authorization was denied or has expired. */
  | { step: 'refuse'; reason: E }
  /** Answer `reason` and note the poll's time, from which the next poll's wait counts. */
  | { step: 'wait'; reason: E }
  /** Spend the device code and store `pair(grant)`, in the chain of the device authorization. */
  | { step: 'redeem' };

export type DevicePollOutcome<E> =
  | { outcome: 'issued' }
  | { outcome: 'refused'; reason: E }
  /** No such device code, another client's, or spent already: nothing changed. */
  | { outcome: 'unknown' };

/** A user's answer to a device authorization. */
export interface DeviceAnswer {
  decision: 'approved' | 'denied';
  user_id: number;
  /** When the user signed in, for an approval; null when not known. */
  auth_time: EpochSeconds | null;
}

export type DeviceAnswerOutcome<E> =
  /** Recorded: the device authorization as it now is. */
  | { outcome: 'answered'; grant: DeviceGrantRecord }
  /** `check` refused; nothing changed. */
  | { outcome: 'refused'; reason: E }
  /** No device authorization has this user code. */
  | { outcome: 'unknown' };

export interface DeviceGrantStorage {
  /** Stores a new device authorization; throws InputError `taken` (`user_code`) when a digest is in use already. */
  create(grant: DeviceGrantRecord): Promise<void>;
  /** How many device authorizations of the client `applicationId` are unanswered and unexpired at `nowSeconds`. */
  pendingCount(applicationId: number, nowSeconds: EpochSeconds): Promise<number>;
  /** The device authorization whose (normalised) user code has this digest. */
  byUserCode(userCodeDigest: string): Promise<DeviceGrantRecord | undefined>;
  /**
   * Records `answer` on the device authorization with this user code digest unless `check`, run on the stored
   * version, refuses it (one already answered, or expired, is the domain's to refuse): one answer wins.
   */
  answer<E>(userCodeDigest: string, check: (grant: DeviceGrantRecord) => E | undefined, answer: DeviceAnswer, nowSeconds: EpochSeconds): Promise<DeviceAnswerOutcome<E>>;
  /**
   * A device's poll with the device code of this digest, for the client `applicationId`: unknown, another client's
   * or redeemed already → 'unknown'; otherwise `judge` decides on the stored version, and at most one poll redeems.
   */
  poll<E>(
    deviceCodeDigest: string,
    applicationId: number,
    judge: (grant: StoredDeviceGrant) => DevicePollStep<E>,
    pair: (grant: StoredDeviceGrant) => NewTokenPair,
    nowSeconds: EpochSeconds,
  ): Promise<DevicePollOutcome<E>>;
}
