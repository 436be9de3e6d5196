// GET /oauth/discovery/keys over real HTTP, as GitLab publishes the keys its id_tokens are signed with: the signing
// key, named by its RFC 7638 thumbprint, 2048 bits or more, public members only, cacheable for a day, open to any
// origin; a signature made with signingKey() verifies against it; a rotation shows at once, the old key beside the new;
// it survives a restart on the same data file and a test kit's reset; and the private key shows in no answer.
import { join } from 'node:path';
import { calculateJwkThumbprint, createRemoteJWKSet, jwtVerify, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateSigningKey, signingKey } from '../../src/domain/oidc/signing-keys.js';
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
    expect(key!.kid).toBe((await signingKey(server.storage)).kid);
    expect(Buffer.from(key!.n!, 'base64url').length * 8).toBeGreaterThanOrEqual(2048);
    expect(memberNames(set).filter((name) => privateMembers.includes(name))).toEqual([]);
    expect(text).not.toContain(pemBody((await server.storage.signingKeys.signing())!.private_key).slice(0, 64));
  });

  it('may be cached for a day, and answers any origin without credentials', async () => {
    const { response } = await keysOf(server.baseUrl, { headers: { origin: 'https://spa.example.com' } });
    expect(response.headers.get('cache-control')).toBe('public, max-age=86400');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('verifies a signature made with signingKey(), fetched as a relying party fetches it', async () => {
    const { kid, privateKey } = await signingKey(server.storage);
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
    expect((await signingKey(server.storage)).kid).toBe(kid);

    if (server.kind === 'file') {
      const reset = await fetch(`${server.baseUrl}/api/v4/test_helpers/reset`, { method: 'POST', headers: { 'PRIVATE-TOKEN': rootPat } });
      expect(reset.status).toBe(204);
      expect((await keysOf(server.baseUrl)).set.keys.map((k) => k.kid)).toEqual(after);
    }
    // A day on, by the instance's clock, the retired key is no longer published.
    const clock = await fetch(`${server.baseUrl}/api/v4/test_helpers/clock`, { ...json('POST', { seconds: 86_400 }), headers: { 'PRIVATE-TOKEN': rootPat, 'content-type': 'application/json' } });
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
      expect((await signingKey(again.storage)).kid).toBe(published.keys[0]!.kid);
    } finally {
      await again.close();
    }
  });
});
