// The second factor of the web sign-in: time-based one-time passwords (RFC 6238, the authenticator apps' default of
// SHA-1, 6 digits, 30-second steps), as the hosted service asks of accounts with two-factor authentication. The
// password grant refuses these accounts outright (spec 5.4); the pages ask for the code after the password.
import { Secret, TOTP } from 'otpauth';
import { InputError } from '../explained-error.js';
import type { Storage } from './storage/index.js';
import type { UserRecord } from './storage/records.js';
import { activeUser } from './users.js';

const period = 30;
/** One step either side, for clocks a little apart (RFC 6238 section 5.2). */
const window = 1;
const base32Pattern = /^[A-Z2-7]{16,128}$/;


/** Throws an InputError for `otp_secret` unless `secret` is a base32 TOTP secret of 80 bits or more (what authenticator apps read). */
export function checkOtpSecret(secret: unknown): string {
  if (typeof secret !== 'string' || !base32Pattern.test(secret)) {
    throw new InputError('otp_secret', 'must be a base32 secret (A-Z, 2-7) of 16 to 128 characters');
  }
  return secret;
}

export const totpFor = (secret: string, account?: string) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period, ...(account === undefined ? {} : { issuer: 'tokenbell', label: account }) });

/** A new random secret of 160 bits (RFC 4226's recommendation), base32 as authenticator apps take it. */
export const newOtpSecret = (): string => checkOtpSecret(new Secret({ size: 20 }).base32);

/** The otpauth:// URI an authenticator app scans (as a QR code) or takes pasted, for the user's account. */
export const provisioningUri = (secret: string, account: string): string => totpFor(secret, account).toString();

/**
 * The time step `code` is valid for at `nowSeconds`, or null. A code is good once: a step at or before the last
 * one accepted for the user is refused, so a code seen over a shoulder or in a log cannot be replayed.
 */
export function acceptedStep(user: UserRecord, code: string, nowSeconds: number): number | null {
  if (!user.otp_secret || !/^\d{6}$/.test(code)) return null;
  const delta = totpFor(user.otp_secret).validate({ token: code, timestamp: nowSeconds * 1000, window });
  if (delta === null) return null;
  const step = Math.floor(nowSeconds / period) + delta;
  return user.otp_last_step != null && step <= user.otp_last_step ? null : step;
}

/**
 * Checks `code` for the user and, when it is good, spends it; answers whether it was good. The store records the step
 * only if no one used it or a later one meanwhile, so two requests with one code cannot both pass.
 */
export async function useCode(storage: Storage, userId: number, code: string, nowSeconds: number): Promise<boolean> {
  const user = await activeUser(storage.users, userId);
  const step = user ? acceptedStep(user, code, nowSeconds) : null;
  return step !== null && storage.users.spendOtpStep(userId, step);
}
