// autocannon runs, reduced to the figures the table shows.
import autocannon, { type Options } from 'autocannon';

export interface LoadFigures {
  /** Expected answers (2xx unless the run expects another status) per second over the run's wall time. */
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  /** Unexpected answers, connection errors and timeouts: any of them means the figure is not what it claims. */
  failed: number;
  statuses: Record<string, number>;
}

/** One autocannon run; `expect` is the status that counts as answered (any 2xx by default), for error floods. */
export async function load({ expect, ...options }: Options & { expect?: number }): Promise<LoadFigures> {
  const result = await autocannon({ timeout: 30, ...options });
  const seconds = (result.finish.getTime() - result.start.getTime()) / 1000;
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count]));
  const answered = Object.values(statuses).reduce((n, count) => n + count, 0);
  const ok = expect === undefined ? result['2xx'] : (statuses[String(expect)] ?? 0);
  return {
    rps: ok / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok,
    failed: answered - ok + result.errors + result.timeouts,
    statuses,
  };
}

/**
 * Single-use values (authorization codes, refresh tokens) handed out once each, in order, to every connection of
 * the runs that share the pool. A pool that runs dry hands out its last value again (the server refuses it, so the
 * run reports failures) and marks itself `exhausted`; the bench checks that after every run and stops with an error,
 * so a figure never silently includes refused reuse.
 */
export class Pool {
  #next = 0;
  exhausted = false;
  constructor(private readonly values: string[], readonly name: string) {}
  take = (): string => {
    if (this.#next < this.values.length) return this.values[this.#next++]!;
    this.exhausted = true;
    return this.values[this.values.length - 1]!;
  };
  add(values: string[]): void {
    this.values.push(...values);
  }
  get used(): number {
    return this.#next;
  }
  get left(): number {
    return this.values.length - this.#next;
  }
  /** Throws if any take() found the pool empty. */
  check(): void {
    if (this.exhausted) throw new Error(`the ${this.name} pool ran out (${this.values.length} values): raise its headroom`);
  }
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Round-robin over `values`, shared by every connection, so each request carries the next one. */
export function roundRobin<T>(values: readonly T[]): () => T {
  let next = 0;
  return () => {
    const value = values[next]!;
    next = (next + 1) % values.length;
    return value;
  };
}
