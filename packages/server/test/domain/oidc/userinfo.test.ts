// The userinfo endpoint's rule (domain/oidc/userinfo.ts): the claims for a live token holding openid; RFC 6750's
// answers otherwise, each with its challenge.
import { describe, expect, it } from 'vitest';
import { userInfo } from '../../../src/domain/oidc/userinfo.js';
import { activeAndBlocked, issueAccessToken } from '../fixtures.js';

/** 2026-11-25T12:00:00Z */
const now = 1795608000;
const settings = { issuer: 'https://tokenbell.example', instanceSecret: 'secret' };

async function refusal(attempt: Promise<unknown>) {
  const error = (await attempt.then(
    () => undefined,
    (e: unknown) => e,
  )) as { code: string; status: number; wwwAuthenticate: string } | undefined;
  return error && { code: error.code, status: error.status, challenge: error.wwwAuthenticate };
}

describe('userInfo', () => {
  it("answers the claims of a live token's user when it holds openid", async () => {
    const { storage, jane } = activeAndBlocked();
    const token = await issueAccessToken(storage, jane, { now, ttl: 60, scopes: ['openid', 'email'] });
    expect(await userInfo(storage, { authorization: `Bearer ${token}` }, now, settings)).toMatchObject({ sub: String(jane.id), email: jane.email, groups: [] });
    expect(await userInfo(storage, { accessTokenQuery: token }, now, settings)).toMatchObject({ sub: String(jane.id) });
  });

  it('refuses no token, a bad, expired or blocked one, and one without openid, each with its challenge', async () => {
    const { storage, jane, blocked } = activeAndBlocked();
    const realm = 'Bearer realm="tokenbell"';
    const invalid = { code: 'invalid_token', status: 401, challenge: `${realm}, error="invalid_token"` };
    expect(await refusal(userInfo(storage, {}, now, settings))).toEqual({ code: 'invalid_token', status: 401, challenge: realm });
    expect(await refusal(userInfo(storage, { authorization: 'Bearer nope' }, now, settings))).toEqual(invalid);
    const expiring = await issueAccessToken(storage, jane, { now, ttl: 60, scopes: ['openid'] });
    expect(await refusal(userInfo(storage, { authorization: `Bearer ${expiring}` }, now + 60, settings))).toEqual(invalid);
    const ofBlocked = await issueAccessToken(storage, blocked, { now, ttl: 60, scopes: ['openid'] });
    expect(await refusal(userInfo(storage, { authorization: `Bearer ${ofBlocked}` }, now, settings))).toEqual(invalid);
    // Two different tokens at once are one method too many (RFC 6750 section 2).
    expect(await refusal(userInfo(storage, { authorization: `Bearer ${expiring}`, accessTokenQuery: 'other' }, now, settings))).toEqual(invalid);
    const api = await issueAccessToken(storage, jane, { now, ttl: 60, scopes: ['api'] });
    expect(await refusal(userInfo(storage, { authorization: `Bearer ${api}` }, now, settings))).toEqual({
      code: 'insufficient_scope',
      status: 403,
      challenge: `${realm}, error="insufficient_scope", scope="openid"`,
    });
  });
});
