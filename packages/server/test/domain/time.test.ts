import { describe, expect, it } from 'vitest';
import { epochSeconds, isoOf } from '../../src/domain/time.js';

describe('stored times', () => {
  it('are whole epoch seconds, shown as ISO 8601 in UTC', () => {
    expect(epochSeconds(new Date('2026-11-25T12:00:00.999Z'))).toBe(1_795_608_000);
    expect(isoOf(1_795_608_000)).toBe('2026-11-25T12:00:00.000Z');
    expect(isoOf(epochSeconds(new Date('2016-09-22T00:00:00Z')))).toBe('2016-09-22T00:00:00.000Z');
    const now = epochSeconds();
    expect(Number.isInteger(now) && Math.abs(now - Date.now() / 1000) < 2).toBe(true);
  });
});
