// What an instance with test helpers on holds besides its store: the clock a test moves, the request journal, the
// queued faults, the automatic approval, and the snapshot a reset goes back to.
import { InputError } from '../../explained-error.js';
import { productionHashing, type ScryptParameters } from '../passwords.js';
import type { StoreSnapshot, Storage } from '../storage/index.js';
import type { LoginThrottle, LoginThrottlePolicy } from '../login-throttle.js';
import { Clock, isoOf } from '../time.js';
import { FaultQueue } from './faults.js';
import { RequestJournal } from './request-journal.js';

/** Said at start whenever the area is on, so that no one runs an instance like this by mistake. */
export const testHelpersWarning =
  'test helpers are on: administrators can shape state, mint tokens, move the clock, reset the instance, read its requests and queue faults; never run a production instance like this';

export class TestKit {
  readonly clock: Clock;
  readonly journal = new RequestJournal();
  readonly faults: FaultQueue;
  /** The user the authorization page signs in and approves as; null when it asks as usual. */
  autoApproval: string | null = null;
  /** The state a reset goes back to; null on a store that cannot restore one (a database shared by instances). */
  #seeded: Promise<StoreSnapshot | null> | undefined;
  #throttle: { throttle: LoginThrottle; longestWindowSeconds: number } | undefined;

  /**
   * `realNow`: the clock this one runs ahead of; real time when not given. `passwordHashing`: what the users the
   * helpers create get their passwords hashed with, as the instance's seed was (startTokenbell's cheap parameters).
   */
  constructor(
    private readonly storage: Storage,
    realNow?: () => number,
    readonly passwordHashing: ScryptParameters = productionHashing,
  ) {
    this.clock = new Clock(realNow);
    this.faults = new FaultQueue(this.clock.now);
  }

  /** Takes the state a reset goes back to: called once start-up and seeding are done. */
  async markSeeded(): Promise<void> {
    this.#seeded = this.storage.maintenance.snapshot();
    await this.#seeded;
  }

  /** The throttle's windows run on real time (rate-limiter-flexible's own clock): moving the clock far enough ends them. */
  attachThrottle(throttle: LoginThrottle, policy: LoginThrottlePolicy): void {
    this.#throttle = { throttle, longestWindowSeconds: Math.max(policy.perAddress.windowSeconds, policy.perLogin.windowSeconds) };
  }

  clockState() {
    return { now: isoOf(this.clock.now()), offset_seconds: this.clock.offsetSeconds };
  }

  async advanceClock(seconds: number) {
    this.clock.advance(seconds);
    if (this.#throttle && seconds >= this.#throttle.longestWindowSeconds) await this.#throttle.throttle.forget();
    return this.clockState();
  }

  async reset(): Promise<void> {
    if (!this.#seeded) throw new Error('TestKit.reset before markSeeded: nothing to go back to');
    const snapshot = await this.#seeded;
    if (!snapshot) {
      throw new InputError('store', `cannot be reset: ${this.storage.maintenance.describe()} is shared by every instance on it; reset needs the memory or JSON file store`);
    }
    await this.storage.maintenance.restore(snapshot);
    this.clock.reset();
    this.faults.clear();
    this.journal.clear();
    this.autoApproval = null;
    await this.#throttle?.throttle.forget({ addresses: true });
  }
}
