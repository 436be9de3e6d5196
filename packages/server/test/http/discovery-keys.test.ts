// GET /oauth/discovery/keys over real HTTP, as GitLab publishes the keys its id_tokens are signed with: the signing
// key, named by its RFC 7638 thumbprint, 2048 bits or more, public members only, cacheable for ten minutes, open to
// any origin; a signature made with signingKey() verifies against it; a rotation shows at once, the new key beside the
// old, and a verifier with a cached set (jose's createRemoteJWKSet) never meets a kid it lacks; --drop-retired
// unpublishes the old keys at once; the set survives a restart on the same data file and a test kit's reset; and the
// private key shows in no answer.
import { join } from 'node:path';
import { calculateJwkThumbprint, createRemoteJWKSet, jwtVerify, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { handoverMargin, keySetLifetime, retiredKeyLifetime, rotateSigningKey, signingKey } from '../../src/domain/oidc/signing-keys.js';
import { tempDir } from '../hardening/support.js';
import { json, startTestServer, type TestServer } from '../support/server.js';

const privateMembers = ['d', 'p', 'q', 'dp', 'dq', 'qi'];
const rootPat = 'tbpat-root-discovery-keys-token-0000000000000000';
const keysSeed = {
  users: [{ username: 'root', email: 'root@example.com', name: 'Administrator', password: 'administrator-password', is_admin: true, personal_access_tokens: [{ name: 'keys', token: rootPat, scopes: ['api'] }] }],
};

interface PublishedSet {
  keys: Array<Record<string, string>>;
}

const keysOf = async (baseUrl: string, init: RequestInit = {}) => {
  const response = await fetch(`${baseUrl}/oauth/discovery/keys`, init);
  const text = await response.text();
  return { response, text, set: JSON.parse(text) as PublishedSet };
};

/** Every member name in a JSON value, however deep. */
const memberNames = (value: unknown): string[] =>
  typeof value !== 'object' || value === null ? [] : Object.entries(value).flatMap(([name, member]) => [...(Array.isArray(value) ? [] : [name]), ...memberNames(member)]);

/** The base64 body of a PEM, the part of the private key that would show if it leaked in any encoding of the PEM. */
const pemBody = (pem: string) => pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ seed: keysSeed, testHelpers: true });
});
afterAll(() => server?.close());

describe('GET /oauth/discovery/keys', () => {
  it('publishes the signing key: RSA, RS256, named by its thumbprint, 2048 bits or more, no private member', async () => {
    const { response, set, text } = await keysOf(server.baseUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(set.keys).toHaveLength(1);
    const [key] = set.keys;
    expect(key).toEqual({ kty: 'RSA', kid: expect.any(String), e: 'AQAB', n: expect.any(String), use: 'sig', alg: 'RS256' });
    expect(key!.kid).toBe(await calculateJwkThumbprint({ kty: 'RSA', n: key!.n!, e: key!.e! }, 'sha256'));
    expect(key!.kid).toBe((await signingKey(server.storage, server.now())).kid);
    expect(Buffer.from(key!.n!, 'base64url').length * 8).toBeGreaterThanOrEqual(2048);
    expect(memberNames(set).filter((name) => privateMembers.includes(name))).toEqual([]);
    expect(text).not.toContain(pemBody((await server.storage.signingKeys.kept())[0]!.private_key).slice(0, 64));
  });

  it('may be cached for ten minutes, and answers any origin without credentials', async () => {
    const { response } = await keysOf(server.baseUrl, { headers: { origin: 'https://spa.example.com' } });
    expect(response.headers.get('cache-control')).toBe('public, max-age=600');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('verifies a signature made with signingKey(), fetched as a relying party fetches it', async () => {
    const { kid, privateKey } = await signingKey(server.storage, server.now());
    const idToken = await new SignJWT({ sub: '1' }).setProtectedHeader({ alg: 'RS256', kid }).setIssuer(server.baseUrl).setIssuedAt().setExpirationTime('5m').sign(privateKey);
    const remote = createRemoteJWKSet(new URL(`${server.baseUrl}/oauth/discovery/keys`));
    const { payload, protectedHeader } = await jwtVerify(idToken, remote, { issuer: server.baseUrl });
    expect(payload.sub).toBe('1');
    expect(protectedHeader.kid).toBe(kid);
    // Tampered, it is refused: the check above can fail.
    const [header, , signature] = idToken.split('.');
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...payload, sub: '2' })).toString('base64url')}.${signature}`;
    await expect(jwtVerify(forged, remote)).rejects.toThrow(/signature/);
  });

  it('shows a rotation at the next request, the new key first and the old one still there, and keeps both through a reset', async () => {
    const before = (await keysOf(server.baseUrl)).set.keys.map((k) => k.kid);
    const { kid, retiredKid } = await rotateSigningKey(server.storage, server.now());
    expect(retiredKid).toBe(before[0]);
    const after = (await keysOf(server.baseUrl)).set.keys.map((k) => k.kid);
    expect(after).toEqual([kid, ...before]);
    // Published, not signing yet.
    expect((await signingKey(server.storage, server.now())).kid).toBe(before[0]);

    if (server.kind === 'file') {
      const reset = await fetch(`${server.baseUrl}/api/v4/test_helpers/reset`, { method: 'POST', headers: { 'PRIVATE-TOKEN': rootPat } });
      expect(reset.status).toBe(204);
      expect((await keysOf(server.baseUrl)).set.keys.map((k) => k.kid)).toEqual(after);
    }
    // A day after the new key took over, by the instance's clock, the retired key is no longer published.
    const clock = await fetch(`${server.baseUrl}/api/v4/test_helpers/clock`, { ...json('POST', { seconds: keySetLifetime + handoverMargin + retiredKeyLifetime }), headers: { 'PRIVATE-TOKEN': rootPat, 'content-type': 'application/json' } });
    expect(clock.status).toBe(200);
    expect((await keysOf(server.baseUrl)).set.keys.map((k) => k.kid)).toEqual([kid]);
  });

  it("shows the private key in no answer of the test helpers' journal", async () => {
    await keysOf(server.baseUrl);
    const requests = await (await fetch(`${server.baseUrl}/api/v4/test_helpers/requests?per_page=100`, { headers: { 'PRIVATE-TOKEN': rootPat } })).text();
    expect(requests).toContain('/oauth/discovery/keys');
    for (const key of await server.storage.signingKeys.kept()) expect(requests).not.toContain(pemBody(key.private_key).slice(0, 64));
    expect(memberNames(JSON.parse(requests)).filter((name) => privateMembers.includes(name))).toEqual([]);
  });
});

describe('GET /oauth/discovery/keys on a data file', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    dir = await tempDir();
  });
  afterAll(() => dir?.remove());

  it('publishes the same key after a restart on the same file', async () => {
    const file = join(dir.path, 'keys.json');
    const first = await startTestServer({ file });
    let published: PublishedSet;
    try {
      published = (await keysOf(first.baseUrl)).set;
    } finally {
      await first.close();
    }
    const again = await startTestServer({ file, seed: { users: [] } });
    try {
      expect((await keysOf(again.baseUrl)).set).toEqual(published);
      expect((await signingKey(again.storage, again.now())).kid).toBe(published.keys[0]!.kid);
    } finally {
      await again.close();
    }
  });
});

describe('a key rotation met by a verifier that caches the set (jose createRemoteJWKSet, as openid-client uses it)', () => {
  const client = { id: 'discovery-keys-oidc-client-00000000', secret: 'tbcs_discovery-keys-oidc-secret-0000000000000' };
  const rotationSeed = {
    users: [{ username: 'ops', email: 'ops@example.com', name: 'Ops', password: 'a long enough password' }],
    applications: [{ name: 'Sign-in', owner: 'ops', client_id: client.id, client_secret: client.secret, redirect_uris: ['https://app.example.com/cb'], scopes: ['openid', 'email'] }],
  };
  let rotating: TestServer;
  beforeAll(async () => {
    rotating = await startTestServer({ seed: rotationSeed });
  });
  afterAll(() => rotating?.close());
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** An id_token from the password grant, as a sign-in's token response carries it. */
  const idToken = async () => {
    const response = await fetch(`${rotating.baseUrl}/oauth/token`, {
      ...json('POST', {}),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', username: 'ops', password: 'a long enough password', scope: 'openid email', client_id: client.id, client_secret: client.secret }),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { id_token: string }).id_token;
  };
  const kidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;

  /**
   * Stops the clock of this process (the server's and jose's alike) half-way through the second `epochSeconds` of the
   * server's clock, whatever the test's real pace, so that a second short of a moment is exactly that.
   */
  const clockAt = (epochSeconds: number) => {
    vi.restoreAllMocks();
    const offset = rotating.now() - Math.floor(Date.now() / 1000);
    vi.spyOn(Date, 'now').mockReturnValue((epochSeconds - offset) * 1000 + 500);
  };

  it('verifies what is signed just after a rotation with the set fetched just before; the new key signs once the set has been cacheable that long; --drop-retired unpublishes the rest at once', { timeout: 30_000 }, async () => {
    // jose's defaults: the set kept ten minutes, and an unknown kid refetched at most every 30 s.
    const verifier = createRemoteJWKSet(new URL(`${rotating.baseUrl}/oauth/discovery/keys`));
    const verify = (token: string) => jwtVerify(token, verifier, { issuer: rotating.baseUrl, audience: client.id });
    const early = await idToken();
    await verify(early);
    const fetched = verifier.fresh;
    expect(fetched).toBe(true);

    const rotatedAt = rotating.now();
    const { kid, signsFrom } = await rotateSigningKey(rotating.storage, rotatedAt);
    const justAfter = await idToken();
    // Signed with the key the cached set holds: no refetch is needed, and none would be allowed within the cooldown.
    expect(kidOf(justAfter)).toBe(kidOf(early));
    expect((await verify(justAfter)).payload.email).toBe('ops@example.com');
    expect(signsFrom).toBe(rotatedAt + keySetLifetime + handoverMargin);

    // A second short of the cache lifetime the old key still signs; at it the new one does, and the verifier, whose
    // copy has gone stale by then, fetches the set again and finds it.
    clockAt(signsFrom - 1);
    expect(kidOf(await idToken())).toBe(kidOf(early));
    clockAt(signsFrom);
    const late = await idToken();
    expect(kidOf(late)).toBe(kid);
    expect(verifier.fresh).toBe(false);
    expect((await verify(late)).payload.email).toBe('ops@example.com');
    // The token the old key signed still verifies: the old key stays published.
    expect((await verify(early)).payload.email).toBe('ops@example.com');

    // A leaked key: rotated with dropRetired, the new key signs at once and nothing else is published.
    const clean = await rotateSigningKey(rotating.storage, rotating.now(), { dropRetired: true });
    expect((await keysOf(rotating.baseUrl)).set.keys.map((k) => k.kid)).toEqual([clean.kid]);
    const afterDrop = await idToken();
    expect(kidOf(afterDrop)).toBe(clean.kid);
    const freshVerifier = createRemoteJWKSet(new URL(`${rotating.baseUrl}/oauth/discovery/keys`));
    expect((await jwtVerify(afterDrop, freshVerifier, { issuer: rotating.baseUrl, audience: client.id })).payload.email).toBe('ops@example.com');
    await expect(jwtVerify(late, freshVerifier, { issuer: rotating.baseUrl, audience: client.id })).rejects.toThrow(/no applicable key found/);
  });
});
