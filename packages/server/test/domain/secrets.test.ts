// Random secrets, their digests and the constant-time comparison (secrets.ts).
import { describe, expect, it } from 'vitest';
import { constantTimeEqual, digest, matchesDigest, newClientId, newSecret, newUserCode, secretPrefixes } from '../../src/domain/secrets.js';

describe('newSecret', () => {
  it('is its kind’s prefix, which secret scanners recognise, then 43 random letters and digits', () => {
    expect(secretPrefixes).toEqual({ accessToken: 'tba_', refreshToken: 'tbr_', personalAccessToken: 'tbpat-', clientSecret: 'tbcs_', authorizationCode: '', deviceCode: 'tbdc_' });
    for (const [kind, prefix] of Object.entries(secretPrefixes)) {
      expect(newSecret(kind as keyof typeof secretPrefixes)).toMatch(new RegExp(`^${prefix}[0-9A-Za-z]{43}$`));
    }
    expect(newSecret('accessToken')).not.toBe(newSecret('accessToken'));
  });

  it('makes user codes of 8 digits and upper-case letters, from the whole alphabet', () => {
    const codes = Array.from({ length: 500 }, () => newUserCode());
    for (const code of codes) expect(code).toMatch(/^[0-9A-Z]{8}$/);
    expect(new Set(codes).size).toBe(500);
    // 4,000 characters drawn from 36: every one of them shows up (missing one has a chance of about 10^-46).
    expect(new Set(codes.join('')).size).toBe(36);
  });

  it('makes App IDs of 32 letters and digits', () => {
    expect(newClientId()).toMatch(/^[0-9A-Za-z]{32}$/);
    expect(newClientId()).not.toBe(newClientId());
  });
});

describe('digest', () => {
  it('is the hex SHA-256 of the secret (FIPS 180-2 example "abc")', () => {
    expect(digest('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('constantTimeEqual', () => {
  it.each([
    ['tbcs_secret', 'tbcs_secret', true],
    ['', '', true],
    ['tbcs_secret', 'tbcs_secreT', false],
    ['tbcs_secret', 'tbcs_secret ', false],
    ['', 'x', false],
  ])('%j and %j: %s', (a, b, equal) => {
    expect(constantTimeEqual(a, b)).toBe(equal);
  });
});

describe('matchesDigest', () => {
  const stored = digest('tbcs_secret');
  it.each([
    ['tbcs_secret', stored, true],
    ['tbcs_secreT', stored, false],
    ['tbcs_secret ', stored, false],
    ['', digest(''), true],
    // A public client (no digest), an unknown one, and digests that are not the store's form never match.
    ['tbcs_secret', null, false],
    ['tbcs_secret', undefined, false],
    ['tbcs_secret', '', false],
    ['tbcs_secret', stored.toUpperCase(), false],
    ['tbcs_secret', stored.slice(0, 62), false],
    [stored, stored, false],
  ])('%j against %j: %s', (secret, storedDigest, matches) => {
    expect(matchesDigest(secret, storedDigest)).toBe(matches);
  });
});
