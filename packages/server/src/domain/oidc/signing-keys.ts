// The keys id_tokens are signed with (RS256, as GitLab's doorkeeper-openid_connect signs them) and the JWK set that
// publishes their public parts (`GET /oauth/discovery/keys`). The store keeps them, so every instance on it signs
// with the same key; the first instance to need one makes it, and `tokenbell keys rotate` makes the next. A key's
// life is a timeline its record holds, read against the instance's clock, so no instance has to switch anything:
// next (published, not signing yet), from `signs_from` the signing key, retired from `retired_at` (published for a
// day more), then dropped by a later rotation.
import { createHash, createPrivateKey, generateKeyPair, type KeyObject } from 'node:crypto';
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

/**
 * Seconds a client may keep the JWK set (its `Cache-Control: max-age`), and so how long a rotated-in key is published
 * before it signs: a verifier that fetched the set just before a rotation holds it no longer than this, so it never
 * meets a kid it lacks. Ten minutes: jose's `createRemoteJWKSet` (under openid-client and most Node verifiers) keeps a
 * set ten minutes whatever the header says, and a rotation takes effect that soon.
 */
export const keySetLifetime = 600;

/**
 * Seconds a rotated-in key waits beyond `keySetLifetime`: this clock counts whole seconds while a client's cache counts
 * from the millisecond its copy arrived, and a copy made just before the rotation may arrive a little after it.
 */
export const handoverMargin = 5;

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
async function newSigningKey(createdAt: number, signsFrom: number): Promise<NewSigningKey> {
  // Asynchronous: a 2048-bit key takes tens of milliseconds of work that must not stall the event loop.
  const { publicKey, privateKey } = await new Promise<{ publicKey: KeyObject; privateKey: KeyObject }>((resolve, reject) =>
    generateKeyPair('rsa', { modulusLength }, (error, publicKey, privateKey) => (error ? reject(error) : resolve({ publicKey, privateKey }))),
  );
  // Node exports the JWK and hashes its thumbprint itself, so that a start (which makes the first key) loads no JOSE
  // library for it; the tests hold the kid to jose's calculateJwkThumbprint.
  const { n, e } = publicKey.export({ format: 'jwk' }) as { n: string; e: string };
  const publicJwk = { kty: 'RSA' as const, n, e };
  // RFC 7638 section 3.2: the required members (e, kty, n for RSA) in lexicographic order, with no white space.
  const kid = createHash('sha256').update(JSON.stringify({ e, kty: 'RSA', n })).digest('base64url');
  return { kid, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, public_jwk: publicJwk, created_at: createdAt, signs_from: signsFrom };
}

/**
 * The first key being made for a store, so that the requests of one instance that find the store without a key wait
 * for the same key pair rather than each making one (instances still race, and the store picks the winner).
 */
const makingFirst = new WeakMap<Storage['signingKeys'], Promise<SigningKeyRecord>>();

function firstKey(storage: Storage, now: number): Promise<SigningKeyRecord> {
  let making = makingFirst.get(storage.signingKeys);
  if (!making) {
    // It signs at once: no client can hold a set made before it.
    making = newSigningKey(now, now).then((key) => storage.signingKeys.addFirst(key));
    makingFirst.set(storage.signingKeys, making);
    // Forgotten once settled: a failure is tried again by the next caller, and a later rotation is asked of the store.
    const forget = () => makingFirst.delete(storage.signingKeys);
    making.then(forget, forget);
  }
  return making;
}

/**
 * The key that signs at `now`: of the keys not yet retired then, the one whose signing began last. A rotation makes
 * the timeline continuous (a key retires when the next begins), so exactly one qualifies; before every key's start (a
 * clock set back) the earliest signs.
 */
function signerAt(kept: readonly SigningKeyRecord[], now: number): SigningKeyRecord | undefined {
  const live = kept.filter((key) => key.retired_at === null || key.retired_at > now).sort((a, b) => a.signs_from - b.signs_from);
  return live.findLast((key) => key.signs_from <= now) ?? live[0];
}

/** The key that signs at `now`; the store's first key is made here when it has none (whichever instance gets there first wins, and all use it). */
export async function signingKey(storage: Storage, now: number): Promise<SigningKey> {
  // Asked of the store every time, so that every instance on a database follows a rotation without a restart.
  const record = signerAt(await storage.signingKeys.kept(), now) ?? (await firstKey(storage, now));
  return { kid: record.kid, privateKey: privateKeyOf(record) };
}

/**
 * The JWK set clients verify id_tokens with, public parts only: the next key, the signing key and those retired less
 * than a day ago, the newest first.
 */
export async function publishedKeys(storage: Storage, now: number): Promise<{ keys: PublishedKey[] }> {
  let kept = await storage.signingKeys.kept();
  if (kept.length === 0) kept = [await firstKey(storage, now)];
  const published = kept.filter((key) => key.retired_at === null || now - key.retired_at < retiredKeyLifetime);
  // Member by member, so nothing else of the record (the private key above all) can slip into the answer.
  return { keys: published.map(({ kid, public_jwk: { n, e } }) => ({ kty: 'RSA', kid, e, n, use: 'sig', alg: 'RS256' })) };
}

export interface Rotation {
  kid: string;
  /** When the new key signs: `keySetLifetime` (and `handoverMargin`) on, or at once when the earlier keys were dropped. */
  signsFrom: number;
  /** The key the new one takes over from (null for a store without a key). */
  retiredKid: string | null;
  /** The keys unpublished by this rotation, whose id_tokens no longer verify. */
  droppedKids: string[];
}

/**
 * Makes a new signing key. Normally it is published now and signs once every cached copy of the set holds it
 * (`keySetLifetime` and `handoverMargin` on); the key it takes over from signs until then and stays published a day more, and keys retired a
 * day ago are dropped. With `dropRetired` (a key that leaked) the new key signs at once and every other key is
 * dropped at once: verifiers that cached the set meet an unknown kid and fetch it again.
 */
export async function rotateSigningKey(storage: Storage, now: number, { dropRetired = false } = {}): Promise<Rotation> {
  const key = await newSigningKey(now, dropRetired ? now : now + keySetLifetime + handoverMargin);
  const { retiredKid, droppedKids } = await storage.signingKeys.rotate(key, dropRetired ? now : now - retiredKeyLifetime);
  return { kid: key.kid, signsFrom: key.signs_from, retiredKid, droppedKids };
}
