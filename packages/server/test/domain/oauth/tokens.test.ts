// Access and refresh tokens (tokens.ts): made in pairs and stored by digest only; usable while unrevoked, unexpired
// and their user active.
import { beforeEach, describe, expect, it } from 'vitest';
import { findActiveAccessToken, newTokenPair } from '../../../src/domain/oauth/tokens.js';
import { digest } from '../../../src/domain/secrets.js';
import type { UserRecord } from '../../../src/domain/storage/records.js';
import { activeAndBlocked, issueAccessToken, tokenResponse } from '../fixtures.js';

const now = 1_800_000_000;
const ttl = 600;

describe('newTokenPair', () => {
  it('answers the plain tokens for the response, and keeps only their digests for the store', () => {
    const { pair, response } = newTokenPair({ user_id: 7, application_id: 3, scopes: ['read_api', 'read_user'], withRefreshToken: true, now, ttl, auth_time: now - 5 });
    expect(response).toEqual(tokenResponse({ scope: 'read_api read_user', expires_in: ttl, created_at: now, refresh: true }));
    expect(pair).toEqual({
      id: expect.any(String),
      token_digest: digest(response.access_token),
      refresh_digest: digest(response.refresh_token!),
      application_id: 3,
      user_id: 7,
      scopes: ['read_api', 'read_user'],
      now,
      ttl,
      auth_time: now - 5,
    });
  });

  it('makes no refresh token when asked for none', () => {
    const { pair, response } = newTokenPair({ user_id: 7, application_id: null, scopes: ['api'], withRefreshToken: false, now, ttl });
    expect(response).toEqual(tokenResponse({ scope: 'api', expires_in: ttl, created_at: now, refresh: false }));
    expect(pair.refresh_digest).toBeNull();
  });
});

describe('findActiveAccessToken', () => {
  let users = activeAndBlocked();
  beforeEach(() => {
    users = activeAndBlocked();
  });
  const issue = (user: UserRecord) => issueAccessToken(users.storage, user, { now, ttl });

  it('finds an issued token with its user until the last second of its lifetime', async () => {
    const token = await issue(users.jane);
    expect(await findActiveAccessToken(users.storage, token, now + ttl - 1)).toEqual({
      record: expect.objectContaining({ token_digest: digest(token), user_id: users.jane.id, created_at: now, expires_in: ttl, revoked_at: null }),
      user: users.jane,
    });
    expect(await findActiveAccessToken(users.storage, token, now + ttl)).toBeUndefined();
  });

  it('finds no revoked token, no blocked user’s token, and no token it never issued', async () => {
    const { storage } = users;
    const token = await issue(users.jane);
    await storage.tokens.revoke((await storage.tokens.byAccessDigest(digest(token)))!.id, now);
    expect(await findActiveAccessToken(storage, token, now)).toBeUndefined();
    expect(await findActiveAccessToken(storage, await issue(users.blocked), now)).toBeUndefined();
    expect(await findActiveAccessToken(storage, 'tba_never_issued', now)).toBeUndefined();
  });
});
