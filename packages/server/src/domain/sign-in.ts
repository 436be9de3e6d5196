// Signing in to the pages, as two steps: the password and, for a two-factor account, the code of its authenticator.
// Both go through the brute-force throttle; what the visitor is told is the page's business.
import type { Storage } from './storage/index.js';
import type { UserRecord } from './storage/records.js';
import type { LoginThrottle } from './login-throttle.js';

export type PasswordStep =
  | { outcome: 'signed-in'; user: UserRecord }
  /** The right password of a two-factor account: the code comes next. */
  | { outcome: 'code-needed'; user: UserRecord }
  /** Unknown login or wrong password: one outcome, so nothing tells which. */
  | { outcome: 'wrong-credentials' }
  /** A two-factor account whose authenticator secret this server does not have: it cannot sign in here. */
  | { outcome: 'no-authenticator' };

export async function passwordStep(throttle: LoginThrottle, storage: Storage, login: string, password: string, address: string): Promise<PasswordStep> {
  const user = await throttle.authenticate(storage, login, password, address, { secondFactorCanFollow: true });
  if (!user) return { outcome: 'wrong-credentials' };
  if (!user.two_factor_enabled) return { outcome: 'signed-in', user };
  return user.otp_secret ? { outcome: 'code-needed', user } : { outcome: 'no-authenticator' };
}

/** A password step that succeeded for a two-factor account, waiting for the code until `until` (epoch seconds). */
export interface PendingSignIn {
  userId: number;
  until: number;
}

export type CodeStep = { outcome: 'signed-in'; userId: number } | { outcome: 'not-started' } | { outcome: 'wrong-code' };

export async function codeStep(
  throttle: LoginThrottle,
  storage: Storage,
  pending: PendingSignIn | undefined,
  code: string,
  now: number,
  address: string,
): Promise<CodeStep> {
  if (!pending || pending.until <= now) return { outcome: 'not-started' };
  if (!(await throttle.verifyCode(storage, pending.userId, code.trim(), now, address))) return { outcome: 'wrong-code' };
  return { outcome: 'signed-in', userId: pending.userId };
}
