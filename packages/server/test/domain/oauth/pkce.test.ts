import { describe, expect, it } from 'vitest';
import { calculateChallenge, isValidChallenge, verifierMatches } from '../../../src/domain/oauth/pkce.js';

// RFC 7636 appendix B.
const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('PKCE S256', () => {
  it('matches the verifier of RFC 7636 appendix B to its challenge, and nothing else', () => {
    expect(isValidChallenge(challenge)).toBe(true);
    expect(verifierMatches(verifier, challenge)).toBe(true);
    expect(verifierMatches(`${verifier.slice(0, -1)}j`, challenge)).toBe(false);
    // The plain method (verifier == challenge) is not accepted.
    expect(verifierMatches(challenge, challenge)).toBe(false);
  });

  it('accepts any printable ASCII verifier that hashes to the challenge, as the service does (git-credential-oauth pads)', () => {
    // git-credential-oauth 0.4.2: 32 random bytes in standard base64, `=` padding kept (44 characters).
    const padded = 'q+/Zk0m3vF1xXyT9bW2cQe8rN5uHjLpA7sDgK4iO6wE=';
    expect(padded).toHaveLength(44);
    expect(verifierMatches(padded, calculateChallenge(padded))).toBe(true);
    const printable = `${'!"#$%&\'()*+,/:;<=>?@[\\]^`{|}'}${'a'.repeat(24)}`;
    expect(verifierMatches(printable, calculateChallenge(printable))).toBe(true);
  });

  it('refuses verifiers outside 43-128 printable ASCII characters and challenges that are not 43 base64url characters', () => {
    expect(verifierMatches(verifier.slice(0, 42), challenge)).toBe(false);
    expect(verifierMatches(`${verifier}+`, challenge)).toBe(false);
    for (const bad of [`${verifier} `, `${verifier}\u00e9`, `${verifier}\n`, 'a'.repeat(129)]) {
      expect(verifierMatches(bad, calculateChallenge(bad)), JSON.stringify(bad)).toBe(false);
    }
    expect(isValidChallenge(`${challenge}=`)).toBe(false);
    expect(isValidChallenge(challenge.slice(1))).toBe(false);
  });
});
