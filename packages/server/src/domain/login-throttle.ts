// Throttling of password checks (the sign-in form and the password grant share it), so passwords cannot be
// guessed at the rate scrypt allows. The policy, in the README's "Brute-force protection" too:
//
// * Per client address: at most `perAddress.failures` failed attempts in a fixed window; after that every attempt
//   from that address is refused with 429 until the window ends. This stops one machine guessing, whatever
//   accounts it aims at.
// * Per account: at most `perAccount.failures` failed attempts in a fixed window, from any address, so a guesser
//   spread over many addresses is slowed as well. An attacker must not be able to lock the real user out, so the
//   window is short, it always ends, and an address this account signed in from successfully (within
//   `knownAddressSeconds`) is exempt from the per-account limit (never from its own per-address one).
//
// Attempts are counted before the password is checked, so a burst of concurrent guesses cannot all slip in while
// the first ones are still hashing; a success gives its address point back and clears the account's count.
// The counters live in memory: a restart forgets them, which errs towards letting the real user in.
//
// Codes of the second factor (two-factor accounts on the sign-in form) are counted exactly like passwords. For
// such an account the right password alone completes nothing: the account's count is cleared, and the address
// remembered as the account's, only once the code is right too.
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Store } from '../store/file-store.js';
import type { UserRecord } from '../store/schema.js';
import { authenticate, findUserByLogin } from './accounts.js';
import { useCode } from './two-factor.js';

export interface LoginThrottlePolicy {
  perAddress: { failures: number; windowSeconds: number };
  perAccount: { failures: number; windowSeconds: number };
  knownAddressSeconds: number;
}

export const defaultLoginThrottlePolicy: LoginThrottlePolicy = {
  perAddress: { failures: 30, windowSeconds: 10 * 60 },
  perAccount: { failures: 10, windowSeconds: 10 * 60 },
  knownAddressSeconds: 30 * 24 * 60 * 60,
};

/** Too many failed attempts: try again after `retryAfterSeconds`. */
export class LoginThrottledError extends Error {
  override name = 'LoginThrottledError';
  constructor(readonly retryAfterSeconds: number) {
    super(`Too many failed sign-in attempts. Try again in ${describeWait(retryAfterSeconds)}.`);
  }
}

function describeWait(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

const retryAfter = (refusal: unknown): number => {
  if (!(refusal instanceof RateLimiterRes)) throw refusal;
  return Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
};

const accountOf = (userId: number) => `user:${userId}`;

export class LoginThrottle {
  readonly #policy: LoginThrottlePolicy;
  readonly #byAddress: RateLimiterMemory;
  readonly #byAccount: RateLimiterMemory;
  /** account key -> address -> when the account last signed in from there (ms). */
  readonly #knownAddresses = new Map<string, Map<string, number>>();

  constructor(policy: LoginThrottlePolicy = defaultLoginThrottlePolicy) {
    this.#policy = policy;
    this.#byAddress = new RateLimiterMemory({ keyPrefix: 'address', points: policy.perAddress.failures, duration: policy.perAddress.windowSeconds });
    this.#byAccount = new RateLimiterMemory({ keyPrefix: 'account', points: policy.perAccount.failures, duration: policy.perAccount.windowSeconds });
  }

  /**
   * `authenticate` under the policy: the user, or null for wrong credentials; throws LoginThrottledError when the
   * address or the account has used up its attempts (without checking the password at all).
   */
  async authenticate(store: Store, login: string, password: string, address: string): Promise<UserRecord | null> {
    const user = findUserByLogin(store, login);
    // The user's id when the login names one, so its username and e-mail address share one budget.
    const account = user ? accountOf(user.id) : `login:${login.toLowerCase()}`;
    return this.#attempt(account, address, async () => {
      const authenticated = await authenticate(store, login, password);
      return { result: authenticated, passed: authenticated !== null, complete: authenticated !== null && !authenticated.two_factor_enabled };
    });
  }

  /** A second-factor code under the same policy: true when it was right (and is now spent). */
  async verifyCode(store: Store, userId: number, code: string, nowSeconds: number, address: string): Promise<boolean> {
    return this.#attempt(accountOf(userId), address, async () => {
      const passed = await useCode(store, userId, code, nowSeconds);
      return { result: passed, passed, complete: passed };
    });
  }

  async #attempt<T>(account: string, address: string, check: () => Promise<{ result: T; passed: boolean; complete: boolean }>): Promise<T> {
    try {
      await this.#byAddress.consume(address);
    } catch (refusal) {
      throw new LoginThrottledError(retryAfter(refusal));
    }
    const countsForAccount = !this.#isKnown(account, address);
    if (countsForAccount) {
      try {
        await this.#byAccount.consume(account);
      } catch (refusal) {
        // Refused before any check, so it was no attempt from this address.
        await this.#byAddress.reward(address);
        throw new LoginThrottledError(retryAfter(refusal));
      }
    }
    const { result, passed, complete } = await check();
    if (passed) await this.#byAddress.reward(address);
    if (complete) {
      await this.#byAccount.delete(account);
      this.#remember(account, address);
    } else if (passed && countsForAccount) {
      // A right password before the code is no failure, but clears nothing either: the code step still counts.
      await this.#byAccount.reward(account);
    }
    return result;
  }

  #isKnown(account: string, address: string): boolean {
    const since = this.#knownAddresses.get(account)?.get(address);
    return since !== undefined && Date.now() - since < this.#policy.knownAddressSeconds * 1000;
  }

  #remember(account: string, address: string): void {
    const addresses = this.#knownAddresses.get(account) ?? new Map<string, number>();
    addresses.delete(address);
    addresses.set(address, Date.now());
    // Only successful sign-ins add entries, so this grows with real users; the oldest go first past a handful.
    while (addresses.size > 16) addresses.delete(addresses.keys().next().value!);
    this.#knownAddresses.set(account, addresses);
  }
}
