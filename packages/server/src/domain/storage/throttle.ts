// Where the sign-in throttle (domain/login-throttle.ts) keeps its counts and the addresses accounts signed in from.
import type { RateLimiterRes } from 'rate-limiter-flexible';

/**
 * One limiter's counts, in fixed windows, as rate-limiter-flexible's limiters answer (the PostgreSQL backing uses
 * one): `consume` takes a point and rejects with the count's RateLimiterRes when it passes the limit (the point stays
 * taken), `reward` gives one back, `delete` ends the key's window, `get` reads a key's count (null without one).
 */
export interface Counts {
  consume(key: string): Promise<RateLimiterRes>;
  get(key: string): Promise<RateLimiterRes | null>;
  reward(key: string): Promise<RateLimiterRes>;
  delete(key: string): Promise<boolean>;
}

/** The addresses each account signed in from: where they are kept is the backing's choice. */
export interface SignInAddresses {
  /** Whether the account signed in from the address at `sinceMs` or later. */
  wasUsedSince(userId: number, address: string, sinceMs: number): Promise<boolean>;
  /** Notes a successful sign-in; only the most recent few addresses of an account are kept. */
  remember(userId: number, address: string, atMs: number): Promise<void>;
}

/** Where the throttle keeps its counts and the known addresses. */
export interface ThrottleBacking {
  limiter(options: { keyPrefix: string; points: number; duration: number }): Counts;
  addresses: SignInAddresses;
  /**
   * Readies a fresh start (a test kit's reset): forgets the known addresses when asked, and answers whether the
   * throttle may drop its counts, which it does by asking `limiter` for new limiters. False, forgetting nothing, where
   * every instance on a database shares them (PostgreSQL): no one instance may clear every instance's throttle.
   */
  forget(addresses: boolean): Promise<boolean>;
}

/** How many addresses an account keeps: only successful sign-ins add them, so this grows with real users only. */
export const knownAddressesPerAccount = 16;
