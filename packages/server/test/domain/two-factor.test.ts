// Time-based one-time passwords for the web sign-in (two-factor.ts), against RFC 6238's own test vectors.
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/explained-error.js';
import { acceptedStep, checkOtpSecret, useCode } from '../../src/domain/two-factor.js';
import { StoreBuilder } from './fixtures.js';

// RFC 6238 appendix B's SHA-1 key, "12345678901234567890", in base32; its codes are the last six of the eight digits.
const otpSecret = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

describe('checkOtpSecret', () => {
  it('takes base32 of 16 to 128 characters, and refuses anything else naming otp_secret', () => {
    expect(checkOtpSecret(otpSecret)).toBe(otpSecret);
    for (const bad of [otpSecret.toLowerCase(), otpSecret.slice(0, 15), `${otpSecret}1`, 'A'.repeat(129), 42, undefined]) {
      expect(() => checkOtpSecret(bad), String(bad)).toThrow(InputError);
    }
    expect(() => checkOtpSecret('ABC')).toThrow(expect.objectContaining({ field: 'otp_secret', code: 'invalid' }));
  });
});

describe('acceptedStep', () => {
  const builder = new StoreBuilder();
  const user = builder.user('awong', { two_factor_enabled: true, otp_secret: otpSecret });

  it('accepts the code of the time step, and of one step either side, answering the code’s step', () => {
    expect(acceptedStep(user, '287082', 59)).toBe(1);
    expect(acceptedStep(user, '081804', 1111111109)).toBe(37037036);
    expect(acceptedStep(user, '287082', 89)).toBe(1);
    expect(acceptedStep(user, '287082', 119)).toBeNull();
    expect(acceptedStep(user, '359152', 59)).toBe(2);
  });

  it('refuses a code that is not six digits, a user without a secret, and a step at or before the last one used', () => {
    expect(acceptedStep(user, '94287082', 59)).toBeNull();
    expect(acceptedStep(user, '28708', 59)).toBeNull();
    expect(acceptedStep({ ...user, otp_secret: null }, '287082', 59)).toBeNull();
    expect(acceptedStep({ ...user, otp_last_step: 1 }, '287082', 59)).toBeNull();
    expect(acceptedStep({ ...user, otp_last_step: 0 }, '287082', 59)).toBe(1);
  });
});

describe('useCode', () => {
  it('spends a good code once, and never for a blocked user', async () => {
    const builder = new StoreBuilder();
    const awong = builder.user('awong', { two_factor_enabled: true, otp_secret: otpSecret });
    const blocked = builder.user('blocked', { two_factor_enabled: true, otp_secret: otpSecret, state: 'blocked' });
    const storage = builder.storage();
    expect(await useCode(storage, awong.id, '287082', 59)).toBe(true);
    expect(await useCode(storage, awong.id, '287082', 60)).toBe(false);
    expect((await storage.users.byId(awong.id))?.otp_last_step).toBe(1);
    expect(await useCode(storage, blocked.id, '287082', 59)).toBe(false);
    expect(await useCode(storage, 999, '287082', 59)).toBe(false);
  });
});
