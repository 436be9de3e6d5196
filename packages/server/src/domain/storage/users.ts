// What the domain asks of stored accounts.
import type { UserRecord } from './records.js';

export type NewUserRow = Omit<UserRecord, 'id'>;

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
   * Records `step` as the last TOTP step the active user used, unless they already used it or a later one; answers
   * whether it was recorded. Atomic, so one code cannot sign in twice, even on two instances at once.
   */
  spendOtpStep(id: number, step: number): Promise<boolean>;
}
