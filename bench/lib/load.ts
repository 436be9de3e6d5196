// autocannon runs, reduced to the figures the table shows.
import autocannon, { type Options } from 'autocannon';

export interface LoadFigures {
  /** 2xx answers per second over the run's wall time. */
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  /** Non-2xx answers, connection errors and timeouts: any of them means the figure is not what it claims. */
  failed: number;
  statuses: Record<string, number>;
}

export async function load(options: Options): Promise<LoadFigures> {
  const result = await autocannon({ timeout: 30, ...options });
  const seconds = (result.finish.getTime() - result.start.getTime()) / 1000;
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count]));
  return {
    rps: result['2xx'] / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result['2xx'],
    failed: result.non2xx + result.errors + result.timeouts,
    statuses,
  };
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
