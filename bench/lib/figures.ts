// Every figure of the run, flat, as the JSON result file holds them (`section.case.metric` → number), with the
// spread of those taken over rounds and the notes the table prints under it: the sections fill them, the table reads them.
import { type LoadFigures, median } from './load.js';

export const figures: Record<string, number> = {};
export const notes: string[] = [];
/** Lowest and highest of a figure's rounds, beside its median (the table prints them as "median (min-max)"). */
export const spreads: Record<string, [number, number]> = {};

export const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

export function record(key: string, value: number): void {
  figures[key] = value;
}

export function recordMedian(key: string, values: number[]): void {
  record(key, median(values));
  spreads[key] = [Math.min(...values), Math.max(...values)];
}

/** Adds `value` to the list of a figure's rounds in `map`. */
export function append<T>(map: Map<string, T[]>, key: string, value: T): void {
  map.set(key, [...(map.get(key) ?? []), value]);
}

export function summarise(prefix: string, runs: LoadFigures[]): void {
  recordMedian(`${prefix}.rps`, runs.map((r) => r.rps));
  record(`${prefix}.p50_ms`, median(runs.map((r) => r.p50)));
  record(`${prefix}.p99_ms`, median(runs.map((r) => r.p99)));
  const failed = runs.reduce((n, r) => n + r.failed, 0);
  record(`${prefix}.failed`, failed);
  if (failed > 0) {
    const statuses: Record<string, number> = {};
    for (const r of runs) for (const [code, n] of Object.entries(r.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
    notes.push(`${prefix}: ${failed} failed requests (statuses ${JSON.stringify(statuses)})`);
  }
}

/** Every load run's figures and every per-round ratio of a section, recorded once its rounds are over. */
export function recordRounds(runs: Map<string, LoadFigures[]>, ratios: Map<string, number[]>): void {
  for (const [id, list] of runs) summarise(id, list);
  for (const [name, list] of ratios) recordMedian(name, list);
}

export function fmt(value: number | undefined, digits = 0): string {
  if (value === undefined || !Number.isFinite(value)) return '-';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
