import { describe, expect, it } from 'vitest';
import {
  checkPasswordHash,
  cheapHashing,
  hashPassword,
  needsRehash,
  productionHashing,
  rehashPassword,
  verifyPassword,
  verifyPasswordAgainstNothing,
} from '../../src/domain/passwords.js';

const parametersOf = (stored: string) => stored.split('$').slice(1, 4).map(Number);

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

  it('hash with cheap parameters when asked (a test instance): still scrypt, salted, and it verifies', async () => {
    const password = 'correct-horse-battery';
    const stored = await hashPassword(password, cheapHashing);
    expect(parametersOf(stored)).toEqual([1024, 8, 1]);
    expect(Buffer.from(stored.split('$')[4]!, 'base64')).toHaveLength(16);
    expect(await verifyPassword(password, stored)).toBe(true);
    expect(await verifyPassword('Correct-horse-battery', stored)).toBe(false);
    // The policy holds whatever the parameters.
    await expect(hashPassword('short77', cheapHashing)).rejects.toMatchObject({ name: 'InputError', field: 'password' });
  });

  it('need a rehash when any parameter is below production, not when all are at or above it', async () => {
    expect(productionHashing).toEqual({ N: 16384, r: 8, p: 1 });
    expect(needsRehash(await hashPassword('correct-horse-battery', cheapHashing))).toBe(true);
    expect(needsRehash(await hashPassword('correct-horse-battery'))).toBe(false);
    const salted = (n: number, r: number, p: number) => `scrypt$${n}$${r}$${p}$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=`;
    expect(needsRehash(salted(8192, 8, 1))).toBe(true);
    expect(needsRehash(salted(16384, 4, 1))).toBe(true);
    // Stronger than production in one way, weaker in another: still raised.
    expect(needsRehash(salted(32768, 4, 1))).toBe(true);
    expect(needsRehash(salted(32768, 8, 2))).toBe(false);
    // A damaged hash verifies nothing, so there is nothing to rehash.
    expect(needsRehash('scrypt$1024$8$1$AAAA')).toBe(false);
  });

  it('rehash a verified password with the production parameters, whatever the policy says now', async () => {
    const rehashed = await rehashPassword('short');
    expect(parametersOf(rehashed)).toEqual([16384, 8, 1]);
    expect(await verifyPassword('short', rehashed)).toBe(true);
  });

  it('accept a stored hash it can verify and refuse, naming password_hash, one it cannot', async () => {
    expect(() => checkPasswordHash('scrypt$1024$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=')).not.toThrow();
    for (const bad of [
      'scrypt$16384$8$1$AAAA',
      'plain-text',
      'scrypt$1000$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
      'scrypt$2097152$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
      'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAA',
      42,
    ]) {
      expect(() => checkPasswordHash(bad), String(bad)).toThrow(expect.objectContaining({ name: 'InputError', field: 'password_hash' }));
    }
  });
});
