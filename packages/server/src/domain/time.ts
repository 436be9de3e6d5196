// Every stored time is in epoch seconds (domain/storage/records.ts); the API and the pages show ISO 8601, as the
// service does.
import type { EpochSeconds } from './storage/records.js';

export const epochSeconds = (date: Date = new Date()): EpochSeconds => Math.floor(date.getTime() / 1000);

export const isoOf = (seconds: EpochSeconds): string => new Date(seconds * 1000).toISOString();

/**
 * An instance's one clock, in epoch seconds: real time, plus however far a test moved it (the test kit's
 * `advanceTestClock`). Everything that expires reads `now`, so moving it expires codes, tokens and sessions alike.
 */
export class Clock {
  #offset = 0;
  /** `real`: the time it runs ahead of (a test's own clock, when it has one). */
  constructor(private readonly real: () => EpochSeconds = () => epochSeconds()) {}
  /** Bound, so it can be handed around as a plain function. */
  readonly now = (): EpochSeconds => this.real() + this.#offset;
  get offsetSeconds(): number {
    return this.#offset;
  }
  advance(seconds: number): void {
    this.#offset += seconds;
  }
  reset(): void {
    this.#offset = 0;
  }
}
