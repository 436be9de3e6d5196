// RFC 7636: only S256 is accepted; `plain` would let anyone who sees the authorization request redeem the code.
import { createHash, randomBytes } from 'node:crypto';
import { constantTimeEqual } from '../secrets.js';

// Section 4.1 allows 43-128 unreserved characters, but the service (Doorkeeper) hashes whatever verifier it is sent
// and compares, and real clients rely on it: git-credential-oauth sends 32 random bytes in standard base64 with its
// `=` padding (44 characters, `+` and `/` among them). So any printable ASCII (0x21-0x7E) of that length is hashed;
// the length keeps the RFC's entropy floor, and the verifier still has to hash to the challenge. A S256 challenge is
// always 43 base64url characters (section 4.2), and stays exactly that.
const verifierPattern = /^[\x21-\x7e]{43,128}$/;
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
