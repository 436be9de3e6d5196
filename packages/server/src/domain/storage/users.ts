// What the domain asks of stored accounts.
import type { EpochSeconds, UserRecord } from './records.js';

export type NewUserRow = Omit<UserRecord, 'id'>;

/** A user deleted, or not because without them a group would have no owner (its paths, in order). */
export type UserDeletion = { deleted: true } | { deleted: false; soleOwnerOf: string[] };

export interface UserStorage {
  byId(id: number): Promise<UserRecord | undefined>;
  byUsername(username: string): Promise<UserRecord | undefined>;
  /** The user whose username or else e-mail address is `login`, whatever the case. */
  byLogin(login: string): Promise<UserRecord | undefined>;
  /** Whether there is any user at all (a fresh store gets the demo data). */
  any(): Promise<boolean>;
  /** Throws InputError `taken` for a username, e-mail address or group path already in use. */
  create(user: NewUserRow): Promise<UserRecord>;
  setPasswordHash(id: number, passwordHash: string): Promise<UserRecord | undefined>;
  /**
   * Replaces the user's password hash with `rehashed` only while it is still `verified` (the hash a sign-in has just
   * checked the password against); answers whether it did. Conditional in one step, so that a password set meanwhile
   * (a reset, or another sign-in's rehash) is never overwritten by a hash of the old password.
   */
  replaceVerifiedPasswordHash(id: number, verified: string, rehashed: string): Promise<boolean>;
  /** Every user, in the order of their ids. */
  all(): Promise<UserRecord[]>;
  /** Each of these answers the user as they now are, or undefined when there is no such user. */
  setState(id: number, state: UserRecord['state']): Promise<UserRecord | undefined>;
  setAdmin(id: number, isAdmin: boolean): Promise<UserRecord | undefined>;
  /** Two-factor on with this TOTP secret, or off (null); either way no code has been used with it yet. */
  setOtpSecret(id: number, otpSecret: string | null): Promise<UserRecord | undefined>;
  /**
   * Deletes the user and everything that is theirs, at once: their tokens, codes, device authorizations,
   * memberships, notification settings, mail to them and about their events, their applications (the tokens other
   * users hold for those are revoked, as when an application is deleted) and the projects in their namespace. Refused,
   * changing nothing, while they are the only owner of a group. Undefined when there is no such user.
   */
  delete(id: number, now: EpochSeconds): Promise<UserDeletion | undefined>;
  /**
   * Records `step` as the last TOTP step the active user used, unless they already used it or a later one; answers
   * whether it was recorded. Atomic, so one code cannot sign in twice, even on two instances at once.
   */
  spendOtpStep(id: number, step: number): Promise<boolean>;
}
