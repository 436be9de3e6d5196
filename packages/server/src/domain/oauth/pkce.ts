// RFC 7636: only S256 is accepted; `plain` would let anyone who sees the authorization request redeem the code.
import { createHash, randomBytes } from 'node:crypto';
import { constantTimeEqual } from '../secrets.js';

// Section 4.1: 43-128 unreserved characters. A S256 challenge is always 43 base64url characters (section 4.2).
const verifierPattern = /^[A-Za-z0-9\-._~]{43,128}$/;
const challengePattern = /^[A-Za-z0-9\-_]{43}$/;

export const isValidChallenge = (challenge: string) => challengePattern.test(challenge);

/** RFC 7636 section 4.2: BASE64URL(SHA256(ASCII(code_verifier))). */
export const calculateChallenge = (verifier: string) => createHash('sha256').update(verifier, 'ascii').digest('base64url');

/** A verifier with 256 bits of entropy (section 7.1), for the test kit's own code exchanges. */
export const newVerifier = () => randomBytes(32).toString('base64url');

/** RFC 7636 section 4.6: BASE64URL(SHA256(ASCII(code_verifier))) == code_challenge. */
export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!verifierPattern.test(verifier)) return false;
  return constantTimeEqual(calculateChallenge(verifier), challenge);
}
