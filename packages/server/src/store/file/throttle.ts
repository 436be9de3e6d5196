// The sign-in throttle's backing for one process (the memory and file stores): the counts in fixed windows in a
// bounded map of this module's own, and a map of the addresses each account signed in from.
import { limits } from '../../config.js';
// The one class needed at run time, alone (src/rate-limiter-flexible-parts.d.ts says why).
import RateLimiterRes from 'rate-limiter-flexible/lib/RateLimiterRes.js';
import { knownAddressesPerAccount, type Counts, type ThrottleBacking } from '../../domain/storage/index.js';

export function memoryThrottleBacking(): ThrottleBacking {
  // Keyed by account, and only a successful sign-in adds to it: it grows with real users, at most 16 addresses each.
  const known = new Map<number, Map<string, number>>();
  return {
    limiter: ({ points, duration }) => new BoundedCounts(points, duration * 1000, limits.loginThrottle.countedKeys),
    addresses: {
      async wasUsedSince(userId, address, sinceMs) {
        const at = known.get(userId)?.get(address);
        return at !== undefined && at >= sinceMs;
      },
      async remember(userId, address, atMs) {
        const addresses = known.get(userId) ?? new Map<string, number>();
        addresses.delete(address);
        addresses.set(address, atMs);
        // The oldest go first.
        while (addresses.size > knownAddressesPerAccount) addresses.delete(addresses.keys().next().value!);
        known.set(userId, addresses);
      },
    },
    async forget(addresses) {
      if (addresses) known.clear();
      return true;
    },
  };
}

interface Window {
  consumed: number;
  endsAt: number;
}

/**
 * Counts in fixed windows of `windowMs`, as rate-limiter-flexible's memory limiter keeps them (a window starts at a
 * key's first point; a refused consume keeps its point), but with at most `maxKeys` keys and no timer per key: keys
 * come from the requests (addresses, logins as typed), so a flood of new ones would otherwise hold memory for a
 * whole window. Every window is as long, so the map's insertion order is the order the windows end in: ended ones
 * are dropped from the front as counts are taken, and when the map is full the window nearest its end goes first.
 * Dropped early, that key counts from nothing again; to get there a guesser must fill the map within a window, which
 * the scrypt check in front of every counted password makes take longer than the window (config.ts, `countedKeys`).
 */
export class BoundedCounts implements Counts {
  // TypeScript-private rather than #private: the tests wrap a count in an object made with it as prototype.
  private readonly windows = new Map<string, Window>();

  constructor(
    readonly points: number,
    readonly windowMs: number,
    readonly maxKeys: number,
  ) {}

  /** Keys with a window open (for the tests that fill the map). */
  get size(): number {
    return this.windows.size;
  }

  async consume(key: string): Promise<RateLimiterRes> {
    const res = this.add(key, 1);
    if (res.consumedPoints > this.points) throw res;
    return res;
  }

  async reward(key: string): Promise<RateLimiterRes> {
    return this.add(key, -1);
  }

  async get(key: string): Promise<RateLimiterRes | null> {
    const window = this.windows.get(key);
    const now = Date.now();
    if (!window || window.endsAt <= now) return null;
    return new RateLimiterRes(Math.max(this.points - window.consumed, 0), window.endsAt - now, window.consumed, false);
  }

  async delete(key: string): Promise<boolean> {
    return this.windows.delete(key);
  }

  private add(key: string, points: number): RateLimiterRes {
    const now = Date.now();
    for (const [first, window] of this.windows) {
      if (window.endsAt > now) break;
      this.windows.delete(first);
    }
    let window = this.windows.get(key);
    const fresh = window === undefined || window.endsAt <= now;
    if (fresh) {
      // Re-inserted at the end (a clock set back can leave an ended window behind a live one).
      this.windows.delete(key);
      if (this.windows.size >= this.maxKeys) this.windows.delete(this.windows.keys().next().value!);
      window = { consumed: 0, endsAt: now + this.windowMs };
      this.windows.set(key, window);
    }
    window!.consumed += points;
    return new RateLimiterRes(Math.max(this.points - window!.consumed, 0), window!.endsAt - now, window!.consumed, fresh);
  }
}
