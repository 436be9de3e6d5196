// The sign-in throttle's backing for one process (the memory and file stores): rate-limiter-flexible's memory limiter
// for the counts, a map for the addresses each account signed in from.
import RateLimiterMemory from 'rate-limiter-flexible/lib/RateLimiterMemory.js';
import { knownAddressesPerAccount, type ThrottleBacking } from '../../domain/storage/index.js';

export function memoryThrottleBacking(): ThrottleBacking {
  const known = new Map<number, Map<string, number>>();
  return {
    limiter: (options) => new RateLimiterMemory(options),
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
