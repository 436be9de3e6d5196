// Passwords are the one low-entropy secret, so they get a slow, memory-hard KDF (scrypt) rather than the plain
// digest used for random tokens. Parameters are stored with each hash, so a hash made with others (older, or a test
// instance's cheap ones) still verifies, and is raised to the production parameters at its user's next sign-in.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { InputError } from '../explained-error.js';

/** scrypt's cost (N, a power of two), block size (r) and parallelism (p). */
export interface ScryptParameters {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

/** What every server hashes with, and what a weaker stored hash is raised to when its user signs in (needsRehash). */
export const productionHashing: ScryptParameters = { N: 16384, r: 8, p: 1 };

/**
 * A test instance's (startTokenbell's unless asked otherwise): still scrypt, with a salt, but 16 times cheaper
 * (about 1 ms), since a suite starting an instance per file would otherwise spend most of each start hashing the
 * seed's passwords. Never for an instance whose passwords matter.
 */
export const cheapHashing: ScryptParameters = { N: 1024, r: 8, p: 1 };

const saltBytes = 16;
const keyBytes = 32;

export const passwordMinLength = 8;
export const passwordMaxLength = 1024;


/** Throws an InputError for `password` unless the password may be set (8..1024 characters). */
export function checkPasswordPolicy(password: string): void {
  // Characters as people count them (code points), not UTF-16 units.
  const length = [...password].length;
  if (length < passwordMinLength) {
    throw new InputError('password', `the password must be at least ${passwordMinLength} characters long`);
  }
  if (length > passwordMaxLength) {
    throw new InputError('password', `the password must be at most ${passwordMaxLength} characters long`);
  }
}

/** `scrypt$N$r$p$saltB64$hashB64`; never contains the password. */
export async function hashPassword(password: string, parameters: ScryptParameters = productionHashing): Promise<string> {
  checkPasswordPolicy(password);
  return derivePasswordHash(password, parameters);
}

/**
 * Whether a stored hash that a sign-in just verified should be replaced by one of the password with the production
 * parameters: any of its parameters is below theirs. Higher ones are kept (an operator's choice).
 */
export function needsRehash(stored: string): boolean {
  const parsed = parse(stored);
  if (!parsed) return false;
  const { N, r, p } = parsed.options;
  return N < productionHashing.N || r < productionHashing.r || p < productionHashing.p;
}

/**
 * The production hash of a password a sign-in has just verified (needsRehash). The password policy is not asked
 * again: the password is already the user's, and a policy changed since must not stop them signing in.
 */
export function rehashPassword(password: string): Promise<string> {
  return derivePasswordHash(password, productionHashing);
}

/**
 * Throws an InputError for `password_hash` unless `stored` is a hash this server can verify, as `tokenbell
 * hash-password` prints it (a seed may give one instead of a password).
 */
export function checkPasswordHash(stored: unknown): asserts stored is string {
  if (typeof stored !== 'string' || !parse(stored)) {
    throw new InputError(
      'password_hash',
      'must be a hash as tokenbell hash-password prints it: scrypt$N$r$p$salt$hash, N a power of two up to 2^20, r 1 to 32, p 1 to 16, salt and hash in base64 (the hash 16 to 64 bytes)',
    );
  }
}

async function derivePasswordHash(password: string, { N, r, p }: ScryptParameters): Promise<string> {
  const salt = randomBytes(saltBytes);
  const key = await derive(password, salt, keyBytes, { N, r, p });
  return ['scrypt', N, r, p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored);
  if (!parsed) {
    // A damaged hash matches nothing, but still costs what a real check costs.
    await verifyPasswordAgainstNothing(password);
    return false;
  }
  const key = await derive(password, parsed.salt, parsed.hash.length, parsed.options);
  return timingSafeEqual(key, parsed.hash);
}

/**
 * Does the work of a real check against a hash made with the current parameters, then answers false: used for
 * unknown users, so the response time never tells a guesser whether an account exists.
 */
export async function verifyPasswordAgainstNothing(password: string): Promise<false> {
  const key = await derive(password, randomBytes(saltBytes), keyBytes, { ...productionHashing });
  timingSafeEqual(key, Buffer.alloc(keyBytes));
  return false;
}

interface Parsed {
  options: { N: number; r: number; p: number };
  salt: Buffer;
  hash: Buffer;
}

function parse(stored: string): Parsed | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [n, rr, pp] = parts.slice(1, 4).map(Number) as [number, number, number];
  // Bounds keep a tampered data file from making one login allocate gigabytes.
  const powerOfTwo = Number.isInteger(n) && n >= 2 && n <= 2 ** 20 && (n & (n - 1)) === 0;
  if (!powerOfTwo || !Number.isInteger(rr) || rr < 1 || rr > 32 || !Number.isInteger(pp) || pp < 1 || pp > 16) {
    return null;
  }
  const salt = Buffer.from(parts[4]!, 'base64');
  const hash = Buffer.from(parts[5]!, 'base64');
  if (salt.length === 0 || hash.length < 16 || hash.length > 64) return null;
  return { options: { N: n, r: rr, p: pp }, salt, hash };
}

function derive(password: string, salt: Buffer, length: number, options: ScryptOptions & { N: number; r: number; p: number }) {
  // scrypt needs 128 * N * r * p bytes; the default 32 MiB ceiling would reject larger stored parameters.
  const maxmem = 128 * options.N * options.r * options.p + 32 * 1024 * 1024;
  return new Promise<Buffer>((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, length, { ...options, maxmem }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}
