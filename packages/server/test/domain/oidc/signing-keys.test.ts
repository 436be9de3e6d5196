// The id_token signing keys (domain/oidc/signing-keys.ts) on an in-memory store: the first key made once, its kid the
// RFC 7638 thumbprint, the private key parsed once; rotation, whose key is published at once and signs once the JWK
// set's cache lifetime has passed on the instance's clock (at once with --drop-retired, which unpublishes the rest);
// and the published set, the next key, the signing key and those retired less than a day ago, public members only.
import { createPublicKey } from 'node:crypto';
import { calculateJwkThumbprint, createLocalJWKSet, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { handoverMargin, keySetLifetime, publishedKeys, retiredKeyLifetime, rotateSigningKey, signingKey } from '../../../src/domain/oidc/signing-keys.js';
import { StoreBuilder } from '../fixtures.js';

/** 2026-11-25T12:00:00Z */
const now = 1795608000;
const privateMembers = ['d', 'p', 'q', 'dp', 'dq', 'qi'];

describe('signing keys', () => {
  it('makes the first key once, however many ask at once, and answers the same parsed key after', async () => {
    const storage = new StoreBuilder().storage();
    const keys = await Promise.all(Array.from({ length: 5 }, () => signingKey(storage, now)));
    expect(new Set(keys.map((k) => k.kid)).size).toBe(1);
    expect(await storage.signingKeys.kept()).toHaveLength(1);
    const again = await signingKey(storage, now);
    expect(again.kid).toBe(keys[0]!.kid);
    expect(again.privateKey).toBe(keys[0]!.privateKey);
  });

  it('makes RSA keys of 2048 bits, named by the RFC 7638 SHA-256 thumbprint of the public key', async () => {
    const storage = new StoreBuilder().storage();
    const { kid, privateKey } = await signingKey(storage, now);
    expect(privateKey.asymmetricKeyType).toBe('rsa');
    expect(privateKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const { kty, n, e } = createPublicKey(privateKey).export({ format: 'jwk' });
    expect(kid).toBe(await calculateJwkThumbprint({ kty: kty!, n: n!, e: e! }, 'sha256'));
    expect(kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('publishes the signing key, making the first one when there is none, without a private member', async () => {
    const storage = new StoreBuilder().storage();
    const { keys } = await publishedKeys(storage, now);
    const { kid } = await signingKey(storage, now);
    expect(keys).toEqual([{ kty: 'RSA', kid, e: 'AQAB', n: expect.stringMatching(/^[A-Za-z0-9_-]{342}$/), use: 'sig', alg: 'RS256' }]);
    for (const member of privateMembers) expect(keys[0]).not.toHaveProperty(member);
  });

  it('rotates: the new key is published at once and signs once the set has been cacheable that long; the previous one stays published for a day after', async () => {
    const storage = new StoreBuilder().storage();
    const first = await signingKey(storage, now);
    const rotated = await rotateSigningKey(storage, now);
    expect(rotated).toEqual({ kid: expect.any(String), signsFrom: now + keySetLifetime + handoverMargin, retiredKid: first.kid, droppedKids: [] });
    expect(rotated.kid).not.toBe(first.kid);
    const signer = async (at: number) => (await signingKey(storage, at)).kid;
    expect(await signer(now)).toBe(first.kid);
    expect(await signer(now + keySetLifetime + handoverMargin - 1)).toBe(first.kid);
    expect(await signer(now + keySetLifetime + handoverMargin)).toBe(rotated.kid);

    const kids = async (at: number) => (await publishedKeys(storage, at)).keys.map((k) => k.kid);
    expect(await kids(now)).toEqual([rotated.kid, first.kid]);
    const handover = now + keySetLifetime + handoverMargin;
    expect(await kids(handover + retiredKeyLifetime - 1)).toEqual([rotated.kid, first.kid]);
    expect(await kids(handover + retiredKeyLifetime)).toEqual([rotated.kid]);

    // The next rotation a day after the handover drops the first key from the store; the one it retires stays.
    const third = await rotateSigningKey(storage, handover + retiredKeyLifetime);
    expect(third).toMatchObject({ retiredKid: rotated.kid, droppedKids: [first.kid] });
    expect((await storage.signingKeys.kept()).map((k) => k.kid)).toEqual([third.kid, rotated.kid]);
  });

  it('rotates with dropRetired: the new key signs at once, and every other key, the pending one too, is unpublished at once', async () => {
    const storage = new StoreBuilder().storage();
    const first = await signingKey(storage, now);
    const pending = await rotateSigningKey(storage, now);
    const clean = await rotateSigningKey(storage, now + 60, { dropRetired: true });
    expect(clean).toEqual({ kid: expect.any(String), signsFrom: now + 60, retiredKid: pending.kid, droppedKids: expect.arrayContaining([first.kid, pending.kid]) });
    expect(clean.droppedKids).toHaveLength(2);
    expect((await signingKey(storage, now + 60)).kid).toBe(clean.kid);
    expect((await publishedKeys(storage, now + 60)).keys.map((k) => k.kid)).toEqual([clean.kid]);
  });

  it('rotates a store without a key into one with a key and nothing retired', async () => {
    const storage = new StoreBuilder().storage();
    const { kid, retiredKid } = await rotateSigningKey(storage, now);
    expect(retiredKid).toBeNull();
    // Nothing signs before it, so it signs at once.
    expect((await signingKey(storage, now)).kid).toBe(kid);
  });

  it('signs what the published set verifies, before and after a rotation, the set taken before the new key signs', async () => {
    const storage = new StoreBuilder().storage();
    const signed = async (at: number) => {
      const { kid, privateKey } = await signingKey(storage, at);
      return new SignJWT({ sub: '1' }).setProtectedHeader({ alg: 'RS256', kid }).setIssuedAt(now).sign(privateKey);
    };
    const before = await signed(now);
    const { kid } = await rotateSigningKey(storage, now);
    const keySet = createLocalJWKSet(await publishedKeys(storage, now));
    const after = await signed(now + keySetLifetime + handoverMargin);
    expect(decodeProtectedHeader(after).kid).toBe(kid);
    for (const token of [before, after]) expect((await jwtVerify(token, keySet, { currentDate: new Date(now * 1000) })).payload.sub).toBe('1');
    // A signature by a key the set does not hold is refused, so the check above can fail.
    const stranger = await signingKey(new StoreBuilder().storage(), now);
    const foreign = await new SignJWT({ sub: '1' }).setProtectedHeader({ alg: 'RS256', kid: stranger.kid }).sign(stranger.privateKey);
    await expect(jwtVerify(foreign, keySet)).rejects.toThrow();
  });
});
