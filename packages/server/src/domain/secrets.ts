// Random secrets (tokens, codes, client secrets) are high-entropy, so a fast SHA-256 digest is enough to store and
// index them; only passwords need a slow KDF (see passwords.ts).
import { hash, timingSafeEqual } from 'node:crypto';
import { customAlphabet } from 'nanoid';

const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
// 43 characters of a 62-letter alphabet: about 256 bits.
const random43 = customAlphabet(alphabet, 43);
const random32 = customAlphabet(alphabet, 32);

/** Prefixes let secret scanners recognise a leaked tokenbell secret. */
export const secretPrefixes = {
  accessToken: 'tba_',
  refreshToken: 'tbr_',
  personalAccessToken: 'tbpat-',
  clientSecret: 'tbcs_',
  authorizationCode: '',
  deviceCode: 'tbdc_',
} as const;

export function newSecret(kind: keyof typeof secretPrefixes): string {
  return secretPrefixes[kind] + random43();
}

/**
 * A device authorization's user code (RFC 8628 section 6.1): 8 characters of digits and upper-case letters, 36^8 or
 * about 2.8 * 10^12 codes, so that a person can read and type it; the pages and the throttle of wrong codes keep it
 * from being guessed in the few minutes it lives.
 */
export const newUserCode = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ', 8);

/** A public identifier (the App ID), unguessable but not secret. */
export function newClientId(): string {
  return random32();
}

// One-shot `hash` (Node 20.12+) costs less than half of a createHash object; it runs on every API request.
export function digest(secret: string): string {
  return hash('sha256', secret, 'hex');
}

const noDigest = Buffer.alloc(32);

/**
 * Whether `secret` is the one whose digest is stored, compared without leaking, through timing, where they differ.
 * Both sides are SHA-256 digests already, of one length, so they are compared as they are, not hashed again as
 * constantTimeEqual would (two more digests on every client authentication). A missing or malformed stored digest
 * is compared against zeros, taking the same time, and never matches.
 */
export function matchesDigest(secret: string, storedDigest: string | null | undefined): boolean {
  const presented = hash('sha256', secret, 'buffer');
  const stored = typeof storedDigest === 'string' && /^[0-9a-f]{64}$/.test(storedDigest) ? Buffer.from(storedDigest, 'hex') : undefined;
  return timingSafeEqual(presented, stored ?? noDigest) && stored !== undefined;
}

/** Compares two strings without leaking, through timing, where they first differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const da = hash('sha256', a, 'buffer');
  const db = hash('sha256', b, 'buffer');
  return timingSafeEqual(da, db) && a.length === b.length;
}
