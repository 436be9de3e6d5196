// Which of the driver's failures are an outage (the database not reachable now), and that the guard turns exactly
// those into StoreUnavailableError wherever a port or the throttle's backing meets them. The frozen and stopped
// database itself is test/hardening/database-outage.test.ts.
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError, type Storage, type ThrottleBacking } from '../../../src/domain/storage/index.js';
import { guardStorage, guardThrottleBacking, isUnavailable } from '../../../src/store/postgres/unavailable.js';

const coded = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

describe('isUnavailable', () => {
  it('is an outage when the socket, the server or the driver says the database cannot answer', () => {
    for (const error of [
      coded('ECONNREFUSED'),
      coded('ECONNRESET'),
      coded('08006'),
      coded('57P01', 'terminating connection due to administrator command'),
      coded('57P03', 'the database system is starting up'),
      coded('57014', 'canceling statement due to statement timeout'),
      new Error('timeout exceeded when trying to connect'),
      new Error('Connection terminated unexpectedly'),
      new Error('Connection terminated due to connection timeout'),
      new Error('Query read timeout'),
    ])
      expect(isUnavailable(error), error.message).toBe(true);
  });

  it('is not one when the request itself was refused', () => {
    for (const error of [coded('23505', 'duplicate key value'), coded('23503'), coded('22P02'), new Error('something else'), 'a string']) expect(isUnavailable(error)).toBe(false);
  });
});

describe('the guard', () => {
  const failing = (error: unknown) => ({ users: { byId: async () => Promise.reject(error), describe: () => 'PostgreSQL' } }) as unknown as Storage;

  it('turns an outage met by a port into StoreUnavailableError, with the driver’s error as its cause', async () => {
    const cause = new Error('Query read timeout');
    const refusal = await guardStorage(failing(cause)).users.byId(1).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(StoreUnavailableError);
    expect((refusal as Error).cause).toBe(cause);
  });

  it('passes any other failure, and every answer, on unchanged', async () => {
    const taken = coded('23505');
    await expect(guardStorage(failing(taken)).users.byId(1)).rejects.toBe(taken);
    expect((guardStorage(failing(taken)).users as unknown as { describe(): string }).describe()).toBe('PostgreSQL');
  });

  it('guards the throttle’s limiter, whose refusals are no Error and pass unchanged', async () => {
    const backing = (limiter: RateLimiterMemory): ThrottleBacking => ({ limiter: () => limiter, addresses: { wasUsedSince: async () => false, remember: async () => {} }, forget: async () => false });
    const down = new RateLimiterMemory({ points: 1, duration: 60 });
    down.consume = () => Promise.reject(coded('ECONNREFUSED'));
    await expect(guardThrottleBacking(backing(down)).limiter({ keyPrefix: 'x', points: 1, duration: 60 }).consume('k')).rejects.toBeInstanceOf(StoreUnavailableError);

    const full = guardThrottleBacking(backing(new RateLimiterMemory({ points: 1, duration: 60 }))).limiter({ keyPrefix: 'x', points: 1, duration: 60 });
    await full.consume('k');
    await expect(full.consume('k')).rejects.toBeInstanceOf(RateLimiterRes);
  });
});
