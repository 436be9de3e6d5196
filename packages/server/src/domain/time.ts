// Every stored time is in epoch seconds (store/schema.ts); the API and the pages show ISO 8601, as the service does.
import type { EpochSeconds } from '../store/schema.js';

export const epochSeconds = (date: Date = new Date()): EpochSeconds => Math.floor(date.getTime() / 1000);

export const isoOf = (seconds: EpochSeconds): string => new Date(seconds * 1000).toISOString();
