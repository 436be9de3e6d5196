// The id_token (domain/oidc/id-token.ts): signed with the store's signing key, its claims and lifetime, and when
// there is none: a grant without openid, without a client, or for a user who may no longer act.
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { idTokenFor, withIdToken, type IssuedFor } from '../../../src/domain/oidc/id-token.js';
import { publishedKeys, signingKey } from '../../../src/domain/oidc/signing-keys.js';
import type { ApplicationRecord } from '../../../src/domain/storage/records.js';
import { StoreBuilder } from '../fixtures.js';

/** 2026-11-25T12:00:00Z */
const now = 1795608000;
const settings = { issuer: 'https://tokenbell.example', instanceSecret: 'secret', idTokenTtl: 300 };
const app = { id: 1, uid: 'the-client' } as ApplicationRecord;

function world() {
  const builder = new StoreBuilder();
  const jane = builder.user('jane', { email: 'jane@example.com' });
  const blocked = builder.user('blocked', { state: 'blocked' });
  return { storage: builder.storage(), jane, blocked };
}

describe('idTokenFor', () => {
  it('signs the claims with the signing key, exp the lifetime after iat, with nonce and auth_time when known', async () => {
    const { storage, jane } = world();
    const issued: IssuedFor = { user_id: jane.id, application: app, scopes: ['openid', 'email'], nonce: 'n1', auth_time: now - 60 };
    const token = (await idTokenFor(storage, issued, now, settings))!;
    const keys = createLocalJWKSet(await publishedKeys(storage, now));
    const { payload } = await jwtVerify(token, keys, { issuer: settings.issuer, audience: 'the-client', currentDate: new Date(now * 1000) });
    expect(payload).toMatchObject({ sub: String(jane.id), iat: now, exp: now + 300, nonce: 'n1', auth_time: now - 60, email: 'jane@example.com' });
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'RS256', typ: 'JWT', kid: (await signingKey(storage, now)).kid });

    const bare = (await idTokenFor(storage, { ...issued, nonce: null, auth_time: null }, now, settings))!;
    const { payload: plain } = await jwtVerify(bare, keys, { currentDate: new Date(now * 1000) });
    expect(plain).not.toHaveProperty('nonce');
    expect(plain).not.toHaveProperty('auth_time');
  });

  it('makes none without openid, without a client, or for a blocked or unknown user', async () => {
    const { storage, jane, blocked } = world();
    const base: IssuedFor = { user_id: jane.id, application: app, scopes: ['openid'], nonce: null, auth_time: now };
    expect(await idTokenFor(storage, { ...base, scopes: ['api', 'email'] }, now, settings)).toBeUndefined();
    expect(await idTokenFor(storage, { ...base, application: null }, now, settings)).toBeUndefined();
    expect(await idTokenFor(storage, { ...base, user_id: blocked.id }, now, settings)).toBeUndefined();
    expect(await idTokenFor(storage, { ...base, user_id: 999 }, now, settings)).toBeUndefined();
  });

  it('completes the token response it was given, and leaves one without openid as it was', async () => {
    const { storage, jane } = world();
    const response = { access_token: 'a', token_type: 'bearer' as const, expires_in: 60, scope: 'openid', created_at: now };
    const issuedFor: IssuedFor = { user_id: jane.id, application: app, scopes: ['openid'], nonce: null, auth_time: now };
    const completed = await withIdToken(storage, { response, issuedFor }, now, settings);
    expect(completed).toBe(response);
    expect(completed.id_token).toEqual(expect.any(String));
    const other = { ...response, scope: 'api' };
    expect(await withIdToken(storage, { response: other, issuedFor: { ...issuedFor, scopes: ['api'] } }, now, settings)).toEqual({ ...response, scope: 'api' });
  });
});
