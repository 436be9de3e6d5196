// Queued faults of the test-helper area (the document's queueFault): the next request matching every criterion
// given gets a chosen answer instead of its real one, or its real one late. This holds the queue and decides which
// fault a request takes; http/faults.ts gathers a request's facts and answers.
import type { components } from '@tokenbell/sdk';
import { nanoid } from 'nanoid';
// The one rule for which API paths are the same (/api/v4 is answered as /api/v3) lives with the areas; it is a pure
// string function, so the domain may use it without knowing anything of HTTP.
import { apiV3Url } from '../api-paths.js';

export type FaultRequest = components['schemas']['FaultRequest'];
export type Fault = components['schemas']['Fault'];
export type FaultMatch = components['schemas']['FaultMatch'];

export type FaultAnswer = components['schemas']['FaultAnswer'];
/** The codes a fault may answer: the document's OAuthError codes and two of RFC 6749 section 4.1.2.1 besides. */
export type FaultErrorCode = NonNullable<FaultAnswer['error']>;

/** What a request offers to match against: path already normalised to /api/v3 (apiV3Url), no query string. */
export interface RequestFacts {
  method: string;
  path: string;
  grantType: string | undefined;
  clientId: string | undefined;
}

const copy = (fault: Fault): Fault => structuredClone(fault);

function matches(match: FaultMatch, facts: RequestFacts): boolean {
  return (
    (match.method === undefined || match.method === facts.method) &&
    (match.path === undefined || match.path === facts.path) &&
    (match.grant_type === undefined || match.grant_type === facts.grantType) &&
    (match.client_id === undefined || match.client_id === facts.clientId)
  );
}

export class FaultQueue {
  /** Oldest first: the oldest matching fault is used first. */
  #faults: Fault[] = [];

  /** `now`: the instance's clock, in seconds since the epoch (it may run ahead of real time). */
  constructor(private readonly now: () => number) {}

  get size(): number {
    return this.#faults.length;
  }

  /** Whether some queued fault matches on grant_type or client_id (then the caller parses the body before take). */
  needsBody(): boolean {
    return this.#faults.some(({ match }) => match.grant_type !== undefined || match.client_id !== undefined);
  }

  add({ match, answer, times }: FaultRequest): Fault {
    // Stored as requests are compared: /api/v4/... is the same path as /api/v3/...
    const stored: FaultMatch = { ...match, ...(match.path === undefined ? {} : { path: apiV3Url(match.path) }) };
    const fault: Fault = {
      id: nanoid(),
      match: stored,
      answer: structuredClone(answer),
      remaining: times ?? 1,
      created_at: new Date(this.now() * 1000).toISOString(),
    };
    this.#faults.push(fault);
    return copy(fault);
  }

  /** Oldest first; copies, so a caller cannot change the queue. */
  list(): Fault[] {
    return this.#faults.map(copy);
  }

  clear(): void {
    this.#faults = [];
  }

  /**
   * The oldest queued fault matching every criterion given, as it was before this use; consumes one use (gone when
   * used up). Synchronous, so two requests arriving together cannot both take a fault's last use.
   */
  take(facts: RequestFacts): Fault | undefined {
    const index = this.#faults.findIndex(({ match }) => matches(match, facts));
    if (index < 0) return undefined;
    const fault = this.#faults[index]!;
    const taken = copy(fault);
    fault.remaining -= 1;
    if (fault.remaining === 0) this.#faults.splice(index, 1);
    return taken;
  }
}
