import { describe, expect, it } from 'vitest';
import {
  hashPassword,
  verifyPassword,
  verifyPasswordAgainstNothing,
} from '../../src/domain/passwords.js';

describe('passwords', () => {
  it('hash as scrypt$N$r$p$salt$hash without the password, and verify', async () => {
    const password = 'correct-horse-battery';
    const [stored, again] = await Promise.all([hashPassword(password), hashPassword(password)]);
    const parts = stored.split('$');
    expect(parts.slice(0, 4)).toEqual(['scrypt', '16384', '8', '1']);
    expect(Buffer.from(parts[4]!, 'base64')).toHaveLength(16);
    expect(Buffer.from(parts[5]!, 'base64')).toHaveLength(32);
    expect(stored).not.toContain(password);
    expect(stored).not.toContain(Buffer.from(password).toString('base64'));
    // A fresh salt each time.
    expect(again).not.toBe(stored);

    const [right, wrong, almost] = await Promise.all([
      verifyPassword(password, stored),
      verifyPassword('Correct-horse-battery', stored),
      verifyPassword('correct-horse-batter', stored),
    ]);
    expect([right, wrong, almost]).toEqual([true, false, false]);
  });

  it('answer false for a damaged stored hash', async () => {
    expect(await verifyPassword('whatever-password', 'scrypt$16384$8$1$AAAA')).toBe(false);
    expect(await verifyPassword('whatever-password', 'plain-text')).toBe(false);
    // Absurd parameters are refused rather than run.
    expect(await verifyPassword('whatever-password', 'scrypt$1073741824$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=')).toBe(false);
  });

  it('verify against nothing: always false', async () => {
    expect(await verifyPasswordAgainstNothing('correct-horse-battery')).toBe(false);
  });

  it('refuse passwords shorter than 8 or longer than 1024 characters', async () => {
    await expect(hashPassword('short77')).rejects.toMatchObject({ name: 'InputError', field: 'password' });
    await expect(hashPassword('x'.repeat(1025))).rejects.toMatchObject({ name: 'InputError', field: 'password' });
    // Characters, not UTF-16 units: eight emoji are eight characters.
    await expect(hashPassword('🔔'.repeat(4))).rejects.toThrow(/at least 8/);
  });
});
