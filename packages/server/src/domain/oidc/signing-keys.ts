// The keys id_tokens are signed with (RS256, as GitLab's doorkeeper-openid_connect signs them) and the JWK set that
// publishes their public parts (`GET /oauth/discovery/keys`). The store keeps them, so every instance on it signs
// with the same key; the first instance to need one makes it, and `tokenbell keys rotate` makes the next.
import { createPrivateKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK } from 'jose';
import type { components } from '@tokenbell/sdk';
import type { NewSigningKey, SigningKeyRecord, Storage } from '../storage/index.js';

export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
}

/** A key of the published set, as the document's JsonWebKey has it: `{ kty: 'RSA', kid, e, n, use: 'sig', alg: 'RS256' }`. */
export type PublishedKey = components['schemas']['JsonWebKey'];

/**
 * Seconds a retired key stays published: longer than any id_token signed with it lives (`--id-token-ttl` is capped at
 * 86400), so a client holding one can still verify it after a rotation.
 */
export const retiredKeyLifetime = 86_400;

/** RFC 7518 section 3.3: a key of 2048 bits or larger; GitLab's are 2048. */
const modulusLength = 2048;

/**
 * Private keys parsed from their PEM, by kid: parsing costs far more than a signature. A kid is the thumbprint of the
 * public key, so one kid never names two keys, whichever store it came from. Bounded, since every store a test opens
 * makes a key of its own; a key dropped here is parsed again when next asked for.
 */
const privateKeys = new Map<string, KeyObject>();
const cachedKeys = 16;

function privateKeyOf(record: SigningKeyRecord): KeyObject {
  let key = privateKeys.get(record.kid);
  if (!key) {
    key = createPrivateKey(record.private_key);
    if (privateKeys.size >= cachedKeys) privateKeys.delete(privateKeys.keys().next().value!);
    privateKeys.set(record.kid, key);
  }
  return key;
}

/** A new RSA key pair, with its kid: the RFC 7638 SHA-256 thumbprint of the public key, as GitLab's gem computes it. */
async function newSigningKey(createdAt: number): Promise<NewSigningKey> {
  // Asynchronous: a 2048-bit key takes tens of milliseconds of work that must not stall the event loop.
  const { publicKey, privateKey } = await new Promise<{ publicKey: KeyObject; privateKey: KeyObject }>((resolve, reject) =>
    generateKeyPair('rsa', { modulusLength }, (error, publicKey, privateKey) => (error ? reject(error) : resolve({ publicKey, privateKey }))),
  );
  const { n, e } = await exportJWK(publicKey);
  const publicJwk = { kty: 'RSA' as const, n: n!, e: e! };
  const kid = await calculateJwkThumbprint(publicJwk, 'sha256');
  return { kid, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, public_jwk: publicJwk, created_at: createdAt };
}

/**
 * The first key being made for a store, so that the requests of one instance that find the store without a key wait
 * for the same key pair rather than each making one (instances still race, and the store picks the winner).
 */
const makingFirst = new WeakMap<Storage['signingKeys'], Promise<SigningKeyRecord>>();

function firstKey(storage: Storage): Promise<SigningKeyRecord> {
  let making = makingFirst.get(storage.signingKeys);
  if (!making) {
    making = newSigningKey(Math.floor(Date.now() / 1000)).then((key) => storage.signingKeys.addFirst(key));
    makingFirst.set(storage.signingKeys, making);
    // Forgotten once settled: a failure is tried again by the next caller, and a later rotation is asked of the store.
    const forget = () => makingFirst.delete(storage.signingKeys);
    making.then(forget, forget);
  }
  return making;
}

/** The key that signs now; the store's first key is made here when it has none (whichever instance gets there first wins, and all use it). */
export async function signingKey(storage: Storage): Promise<SigningKey> {
  // Asked of the store every time, so that every instance on a database signs with the new key after a rotation.
  const record = (await storage.signingKeys.signing()) ?? (await firstKey(storage));
  return { kid: record.kid, privateKey: privateKeyOf(record) };
}

/** The JWK set clients verify id_tokens with: the signing key and those retired less than a day ago, public parts only. */
export async function publishedKeys(storage: Storage, now: number): Promise<{ keys: PublishedKey[] }> {
  let kept = await storage.signingKeys.kept();
  if (kept.length === 0) kept = [await firstKey(storage)];
  const published = kept.filter((key) => key.retired_at === null || now - key.retired_at < retiredKeyLifetime);
  // Member by member, so nothing else of the record (the private key above all) can slip into the answer.
  return { keys: published.map(({ kid, public_jwk: { n, e } }) => ({ kty: 'RSA', kid, e, n, use: 'sig', alg: 'RS256' })) };
}

/** Makes a new signing key; the previous one stays published for a day (longer than any id_token lives: `--id-token-ttl` is capped at 86400), keys retired before that are dropped. */
export async function rotateSigningKey(storage: Storage, now: number): Promise<{ kid: string; retiredKid: string | null }> {
  const key = await newSigningKey(now);
  const { retiredKid } = await storage.signingKeys.rotate(key, now, now - retiredKeyLifetime);
  return { kid: key.kid, retiredKid };
}
