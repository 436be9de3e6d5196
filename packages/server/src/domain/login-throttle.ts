// Throttling of password checks (the sign-in form and the password grant share it), so passwords cannot be
// guessed at the rate scrypt allows. The policy (its numbers in config.ts `limits`, and "Brute-force protection" in
// docs/security.md):
//
// * Per client address: at most `perAddress.failures` failed attempts in a fixed window; after that every attempt
//   from that address is refused with 429 until the window ends. This stops one machine guessing, whatever
//   accounts it aims at.
// * Per login, as typed (case-insensitive): at most `perLogin.failures` failed attempts in a fixed window, from any
//   address, so a guesser spread over many addresses is slowed as well. The count is the login string's, not the
//   account's: were a username and its e-mail address counted together, exhausting one and trying the other would
//   tell a guesser that they belong to one account. For the same reason an unknown login is counted and refused
//   exactly like a known one. An attacker must not be able to lock the real user out, so the window is short, it
//   always ends, and an address the account signed in from successfully (within `knownAddressSeconds`) is exempt
//   from the per-login limit (never from its own per-address one).
//
// Each attempt reserves a point on its counts before the password is checked, so a burst of concurrent guesses cannot
// all slip in while the first ones are still hashing: reservations and recorded failures together never pass the
// limit. A failure keeps its point (it becomes a recorded failure); a success gives its address point back and clears
// the login's count. Only recorded failures refuse: while the count is full of reservations still in flight, a new
// attempt waits for one of them to settle (a success frees room, a failure may fill the last of it) rather than being
// refused, so right passwords, however many at once, never lock anyone out. A refused attempt gives back the point its
// consume took, so refusals count nothing: only failures hold an address or a login at its limit (Budget, below).
// A consume still unanswered may hold a point too (on a shared count a refusal can come back before the success that
// took the last point), so an attempt refused meanwhile waits for it as for a reservation. A refused consume holds one
// until it is given back, so two attempts looking again at once can each be refused by the other's passing point with
// room on the count: a refusal is the count's own only when nothing of this process was on the count while it was
// asked. Then it refuses every waiter too, at once; otherwise the last attempt to find nothing left to wait for looks
// again.
// Which points are reservations only the process holding them knows, so waiting is per process: on a backing every
// instance shares, an attempt is refused while the count is full of another instance's reservations (that refusal
// also counts nothing), and a process that dies mid-check leaves its reservations counted as failures for the window.
// The counters and the known addresses live where the backing keeps them: in memory by default (a restart forgets
// them, which errs towards letting the real user in), or in PostgreSQL, shared by every instance on the database, so
// that spreading guesses over instances gains nothing (store/postgres/throttle.ts).
//
// Codes of the second factor (two-factor accounts on the sign-in form) are counted per account with the same
// limits: only someone who knew the password gets that far, so the account's id reveals nothing. For such an account
// the right password alone completes nothing, and where no second factor can follow (the password grant) it is
// a failure like any wrong password, so that neither the answer nor the count tells a guesser it was right.
// The one class needed at run time, alone (src/rate-limiter-flexible-parts.d.ts says why).
import RateLimiterRes from 'rate-limiter-flexible/lib/RateLimiterRes.js';
import type { Counts, Storage, ThrottleBacking } from './storage/index.js';
import type { UserRecord } from './storage/records.js';
import { authenticate } from './accounts.js';
import { useCode } from './two-factor.js';

export interface LoginThrottlePolicy {
  perAddress: { failures: number; windowSeconds: number };
  perLogin: { failures: number; windowSeconds: number };
  /** Device authorizations asked for from one address, answered or not: a flood is refused, not stored. */
  deviceStartsPerAddress: { requests: number; windowSeconds: number };
  knownAddressSeconds: number;
}

/** Too many failed attempts: try again after `retryAfterSeconds`. */
export class LoginThrottledError extends Error {
  override name = 'LoginThrottledError';
  constructor(
    readonly retryAfterSeconds: number,
    what = 'failed sign-in attempts',
  ) {
    super(`Too many ${what}. Try again in ${describeWait(retryAfterSeconds)}.`);
  }
}

function describeWait(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

const retryAfter = (refusal: RateLimiterRes): number => Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));

/** When the window of a count ends, in epoch ms (a count without a window never ends). */
const windowEnd = (res: RateLimiterRes): number => (res.msBeforeNext < 0 ? Infinity : Date.now() + res.msBeforeNext);

const accountOf = (userId: number) => `user:${userId}`;
// A visitor who has not signed in (the sign-in page naming the device's application) is counted by address alone.
const deviceCodesOf = (userId: number | null, address: string) => (userId === null ? `device-visitor:${address}` : `device:${userId}`);
const loginKey = (login: string) => `login:${login.toLowerCase()}`;

export interface PasswordCheckOptions {
  /**
   * Whether a right password of a two-factor account may go on to the code step (the sign-in form) or, with no
   * second step (the password grant), must count and answer as a failure.
   */
  secondFactorCanFollow: boolean;
}

export class LoginThrottle {
  readonly #policy: LoginThrottlePolicy;
  readonly #backing: ThrottleBacking;
  /** Reads the time the known addresses are judged by; the windows run on rate-limiter-flexible's own clock. */
  readonly #nowMs: () => number;
  #byAddress: Budget;
  /** Failed passwords per login string, and failed codes per account (keys from loginKey and accountOf). */
  #byLogin: Budget;
  /**
   * Wrong device user codes (checkUserCode), per address and per account, counted apart from passwords: a user
   * mistyping the code their device shows must not lock the sign-in form of their address.
   */
  #deviceCodes: [byAddress: Budget, byAccount: Budget];
  #deviceStarts: Counts;

  constructor(policy: LoginThrottlePolicy, backing: ThrottleBacking, nowMs: () => number = Date.now) {
    this.#policy = policy;
    this.#backing = backing;
    this.#nowMs = nowMs;
    [this.#byAddress, this.#byLogin, this.#deviceStarts, ...this.#deviceCodes] = this.#limiters();
  }

  #limiters(): [byAddress: Budget, byLogin: Budget, deviceStarts: Counts, deviceCodesByAddress: Budget, deviceCodesByAccount: Budget] {
    const { perAddress, perLogin, deviceStartsPerAddress: starts } = this.#policy;
    const budget = (keyPrefix: string, { failures, windowSeconds }: { failures: number; windowSeconds: number }) =>
      new Budget(this.#backing.limiter({ keyPrefix, points: failures, duration: windowSeconds }));
    const deviceStarts = this.#backing.limiter({ keyPrefix: 'device-start', points: starts.requests, duration: starts.windowSeconds });
    return [budget('address', perAddress), budget('login', perLogin), deviceStarts, budget('device-address', perAddress), budget('device-account', perLogin)];
  }

  /**
   * Ends every current window, so that every address and login has all its attempts again, and with `addresses`
   * forgets where each account signed in from: a test kit's reset, or its clock moved past the windows. On a backing
   * every instance shares (PostgreSQL) it does nothing, as one instance may not clear the others' throttle.
   */
  async forget({ addresses = false }: { addresses?: boolean } = {}): Promise<void> {
    if (!(await this.#backing.forget(addresses))) return;
    // An attempt still in flight settles on the old counts, which no one asks again.
    [this.#byAddress, this.#byLogin, this.#deviceStarts, ...this.#deviceCodes] = this.#limiters();
  }

  /**
   * A device authorization asked for from `address` (RFC 8628 section 5.2 leaves its rate to the server): counted
   * whatever becomes of it, since each one is stored; throws LoginThrottledError past the policy's count.
   */
  async countDeviceStart(address: string): Promise<void> {
    try {
      await this.#deviceStarts.consume(address);
    } catch (error) {
      if (error instanceof RateLimiterRes) throw new LoginThrottledError(retryAfter(error), 'device authorizations from this address');
      throw error;
    }
  }

  /**
   * `authenticate` under the policy: the user, or null for wrong credentials (and, unless a second factor can
   * follow, for the right password of a two-factor account); throws LoginThrottledError when the address or the
   * login has used up its attempts (without checking the password at all).
   */
  async authenticate(storage: Storage, login: string, password: string, address: string, options: PasswordCheckOptions): Promise<UserRecord | null> {
    const user = await storage.users.byLogin(login);
    return this.#attempt(loginKey(login), user?.id ?? null, address, async () => {
      const authenticated = await authenticate(storage, login, password);
      const needsCode = authenticated !== null && authenticated.two_factor_enabled;
      if (needsCode && !options.secondFactorCanFollow) return { result: null, passed: false, complete: false };
      return { result: authenticated, passed: authenticated !== null, complete: authenticated !== null && !needsCode };
    });
  }

  /** A second-factor code under the same policy: true when it was right (and is now spent). */
  async verifyCode(storage: Storage, userId: number, code: string, nowSeconds: number, address: string): Promise<boolean> {
    return this.#attempt(accountOf(userId), userId, address, async () => {
      const passed = await useCode(storage, userId, code, nowSeconds);
      return { result: passed, passed, complete: passed };
    });
  }

  /**
   * A device user code typed by the signed-in user `userId`, or carried to the sign-in page by a visitor (null)
   * (RFC 8628 section 5.1), under the same limits on counts of
   * its own, per address and per account; `check` answers its result and whether the code was one to answer. Every
   * address counts, the user's own included (they are signed in: that their address is known says nothing about the
   * codes they try), and a right code clears nothing, so that right and wrong codes in turn gain a guesser nothing.
   * Throws LoginThrottledError when either count is full, without calling `check`.
   */
  async checkUserCode<T>(userId: number | null, address: string, check: () => Promise<{ result: T; right: boolean }>): Promise<T> {
    try {
      return await this.#attempt(deviceCodesOf(userId, address), null, address, async () => {
        const { result, right } = await check();
        return { result, passed: right, complete: false };
      }, this.#deviceCodes);
    } catch (error) {
      if (error instanceof LoginThrottledError) throw new LoginThrottledError(error.retryAfterSeconds, 'wrong device codes');
      throw error;
    }
  }

  /**
   * `counted` is the key whose count the attempt uses (a login, or an account for codes); `userId` the account the
   * attempt names, if any: an address it signed in from is exempt from that count, and a success remembers it.
   * `budgets` are the counts per address and per `counted` key: the sign-in's unless given.
   */
  async #attempt<T>(counted: string, userId: number | null, address: string, check: () => Promise<Checked<T>>, budgets?: [Budget, Budget]): Promise<T> {
    // An attempt settles on the counts it reserved on, even when forget replaces them meanwhile.
    const [byAddress, byLogin] = budgets ?? [this.#byAddress, this.#byLogin];
    const fromAddress = await byAddress.reserve(address);
    let ofLogin: Reservation | undefined;
    let checking = false;
    let checked: Checked<T> | undefined;
    try {
      const known = userId !== null && (await this.#backing.addresses.wasUsedSince(userId, address, this.#nowMs() - this.#policy.knownAddressSeconds * 1000));
      if (!known) ofLogin = await byLogin.reserve(counted);
      checking = true;
      checked = await check();
      if (checked.complete && userId !== null) await this.#backing.addresses.remember(userId, address, this.#nowMs());
      return checked.result;
    } finally {
      // A check that throws counts as a failure: nothing says the password was right. Refused before any check (or
      // the known addresses unreadable), it was no attempt from this address.
      const failed = checking && !checked?.passed;
      await Promise.all([
        byAddress.settle(fromAddress, failed ? 'keep' : 'give back'),
        // A right password before the code is no failure, but clears nothing either: the code step still counts.
        ofLogin && byLogin.settle(ofLogin, checked?.complete ? 'clear' : checked?.passed ? 'give back' : 'keep'),
      ]);
    }
  }
}

interface Checked<T> {
  result: T;
  /** No failure: the secret was right (and, for a two-factor account's password, the code may follow). */
  passed: boolean;
  /** Nothing more is asked: the account is signed in. */
  complete: boolean;
}

/** A point an attempt holds on one count, from before its check until it settles. */
interface Reservation {
  key: string;
  /** When the window the point was counted in ends, in epoch ms: past it the point is gone and nothing is given back. */
  windowEndsMs: number;
}

/** What this process knows of one key that the shared count cannot tell: which of its points are reservations. */
interface InFlight {
  /** Reservations this process holds on the key. */
  reserved: number;
  /** Consumes of this process on the key started so far: a refusal is the count's own if none started meanwhile. */
  started: number;
  /**
   * Consumes of this process on the key still awaiting their answer: each may have taken a point already. Answers
   * from a shared count come back in any order, so a refusal can arrive before the success that took the last point.
   */
  consuming: number;
  /** How many of them have settled so far: an attempt refused while one settled tries again at once. */
  settled: number;
  /**
   * Refused consumes of this process on the key whose point is still being given back: until it is, the count holds a
   * point no attempt has, which may have refused another attempt while a point was free.
   */
  returning: number;
  /** Attempts on the key in this process, reserving or reserved; the entry goes when none is left. */
  attempts: number;
  /** Attempts waiting for a reservation to settle: woken to look again, or refused for the seconds given. */
  waiting: Array<(refusedForSeconds?: number) => void>;
}

/** One limiter's counts, with the reservations this process holds on them (the policy's waiting is here). */
class Budget {
  readonly #limiter: Counts;
  readonly #keys = new Map<string, InFlight>();

  constructor(limiter: Counts) {
    this.#limiter = limiter;
  }

  /** A point on `key`, once there is room for one; throws LoginThrottledError when recorded failures fill the count. */
  async reserve(key: string): Promise<Reservation> {
    let inFlight = this.#keys.get(key);
    if (!inFlight) this.#keys.set(key, (inFlight = { reserved: 0, started: 0, consuming: 0, settled: 0, returning: 0, attempts: 0, waiting: [] }));
    inFlight.attempts += 1;
    let waited = false;
    try {
      for (;;) {
        const settled = inFlight.settled;
        const alone = inFlight.reserved + inFlight.consuming + inFlight.returning === 0;
        const started = ++inFlight.started;
        let refusal: RateLimiterRes;
        inFlight.consuming += 1;
        try {
          const counted = await this.#limiter.consume(key);
          inFlight.consuming -= 1;
          inFlight.reserved += 1;
          // A success that cleared the count may have made room for more than this one.
          this.#wakeNext(inFlight);
          return { key, windowEndsMs: windowEnd(counted) };
        } catch (error) {
          inFlight.consuming -= 1;
          if (!(error instanceof RateLimiterRes)) {
            // A waiter may be waiting on this consume: it must look again rather than wait for a settle.
            this.#wakeNext(inFlight);
            throw error;
          }
          refusal = error;
        }
        inFlight.returning += 1;
        try {
          await this.#giveBack(key, windowEnd(refusal));
        } finally {
          inFlight.returning -= 1;
        }
        if (inFlight.settled !== settled) continue;
        // Nothing of this process was on the count from before the consume to its answer, so the count was full
        // without it: every waiter would be refused the same and must hear it rather than wait for a settle that
        // never comes. All at once, as one after another a large burst's refusals would take a round trip each.
        if (alone && inFlight.started === started) {
          const seconds = retryAfter(refusal);
          for (const refuse of inFlight.waiting.splice(0)) refuse(seconds);
          throw new LoginThrottledError(seconds);
        }
        // Otherwise the last of those points to end wakes a waiter (a settle or a consume), or finds nothing left to
        // wait for and looks again (here); no settle can slip in between this test and queueing the waiter.
        if (inFlight.reserved + inFlight.consuming + inFlight.returning === 0) continue;
        const refusedForSeconds = await new Promise<number | undefined>((resolve) => (waited ? inFlight.waiting.unshift(resolve) : inFlight.waiting.push(resolve)));
        if (refusedForSeconds !== undefined) throw new LoginThrottledError(refusedForSeconds);
        waited = true;
      }
    } catch (error) {
      this.#leave(key, inFlight);
      throw error;
    }
  }

  /**
   * Ends a reservation: `keep` its point as a recorded failure, `give back` the point (the attempt was no failure), or
   * `clear` the key's whole count (a completed sign-in).
   */
  async settle(reservation: Reservation, how: 'keep' | 'give back' | 'clear'): Promise<void> {
    const inFlight = this.#keys.get(reservation.key)!;
    try {
      if (how === 'give back') await this.#giveBack(reservation.key, reservation.windowEndsMs);
      if (how === 'clear') await this.#limiter.delete(reservation.key);
    } finally {
      // Only once the count has changed: a waiter woken earlier would find no room and wait again.
      inFlight.reserved -= 1;
      inFlight.settled += 1;
      this.#wakeNext(inFlight);
      this.#leave(reservation.key, inFlight);
    }
  }

  async #giveBack(key: string, windowEndsMs: number): Promise<void> {
    // In a window that began after the point was taken it would be a point the next attempts never took.
    if (Date.now() < windowEndsMs) await this.#limiter.reward(key);
  }

  #wakeNext(inFlight: InFlight): void {
    inFlight.waiting.shift()?.();
  }

  #leave(key: string, inFlight: InFlight): void {
    inFlight.attempts -= 1;
    if (inFlight.attempts === 0) this.#keys.delete(key);
  }
}
