import { describe, expect, it } from 'vitest';
import { isValidChallenge, verifierMatches } from '../../../src/domain/oauth/pkce.js';

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

  it('refuses verifiers outside 43-128 unreserved characters and challenges that are not 43 base64url characters', () => {
    expect(verifierMatches(verifier.slice(0, 42), challenge)).toBe(false);
    expect(verifierMatches(`${verifier}+`, challenge)).toBe(false);
    expect(isValidChallenge(`${challenge}=`)).toBe(false);
    expect(isValidChallenge(challenge.slice(1))).toBe(false);
  });
});
