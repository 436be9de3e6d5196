// The memory backing's counts are bounded (issue 42, item 5): keys come from requests (addresses, logins as typed),
// so a flood of new ones must not hold memory for a whole window. Filled past limits.loginThrottle.countedKeys, each
// count keeps that many keys, still refuses a key past its limit, and drops ended windows without a timer per key.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { limits } from '../../../src/config.js';
import { LoginThrottle, LoginThrottledError } from '../../../src/domain/login-throttle.js';
import type { ThrottleBacking } from '../../../src/domain/storage/index.js';
import { BoundedCounts, memoryThrottleBacking } from '../../../src/store/file/throttle.js';

const bound = limits.loginThrottle.countedKeys;
const refused = (promise: Promise<unknown>) => promise.then(() => false, (error: unknown) => (error instanceof LoginThrottledError ? true : Promise.reject(error)));

afterEach(() => {
  vi.useRealTimers();
});

describe('the memory backing, filled past its bound', () => {
  it('keeps at most countedKeys windows per count, dropping the one nearest its end, and counts the rest as before', async () => {
    const counts = new BoundedCounts(3, 60_000, bound);
    await counts.consume('first');
    for (let i = 0; i < bound + 10; i++) await counts.consume(`flood-${i}`);
    expect(counts.size).toBe(bound);
    // The earliest windows went; the latest are whole.
    expect(await counts.get('first')).toBeNull();
    expect(await counts.get('flood-0')).toBeNull();
    expect((await counts.get(`flood-${bound + 9}`))?.consumedPoints).toBe(1);
    // Past the bound a key is still refused past its limit, and a reward still gives a point back.
    for (let i = 0; i < 3; i++) await counts.consume('guesser');
    await expect(counts.consume('guesser')).rejects.toMatchObject({ consumedPoints: 4, remainingPoints: 0 });
    await counts.reward('guesser');
    expect((await counts.get('guesser'))?.consumedPoints).toBe(3);
    expect(counts.size).toBe(bound);
  });

  it('drops ended windows as it counts, with no timer per key', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout'] });
    const counts = new BoundedCounts(3, 60_000, bound);
    for (let i = 0; i < 1_000; i++) await counts.consume(`address-${i}`);
    expect(vi.getTimerCount()).toBe(0);
    vi.setSystemTime(Date.now() + 60_000);
    const res = await counts.consume('address-0');
    expect(res).toMatchObject({ consumedPoints: 1, isFirstInDuration: true });
    expect(counts.size).toBe(1);
  });

  it('holds through the throttle: a flood of device authorizations from new addresses stays within the bound, and one address is still limited', async () => {
    const memory = memoryThrottleBacking();
    const limiters: BoundedCounts[] = [];
    const backing: ThrottleBacking = { ...memory, limiter: (options) => limiters[limiters.push(memory.limiter(options) as BoundedCounts) - 1]! };
    const throttle = new LoginThrottle(limits.loginThrottle, backing);
    const { requests } = limits.loginThrottle.deviceStartsPerAddress;
    for (let i = 0; i < requests; i++) expect(await refused(throttle.countDeviceStart('192.0.2.1'))).toBe(false);
    expect(await refused(throttle.countDeviceStart('192.0.2.1'))).toBe(true);
    // As many addresses again as the bound, each asking once (an IPv6 range has plenty).
    for (let i = 0; i < bound + 10; i++) expect(await refused(throttle.countDeviceStart(`2001:db8::${i.toString(16)}`))).toBe(false);
    expect(Math.max(...limiters.map((l) => l.size))).toBe(bound);
    for (let i = 0; i < requests; i++) await throttle.countDeviceStart('198.51.100.7');
    expect(await refused(throttle.countDeviceStart('198.51.100.7'))).toBe(true);
  });
});
