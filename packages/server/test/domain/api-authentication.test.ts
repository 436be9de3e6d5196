// How an API call authenticates (api-authentication.ts): one OAuth access token, in the header or the query, or one
// personal access token; anything else sent is `invalid`, nothing sent is `missing`.
import { beforeEach, describe, expect, it } from 'vitest';
import { createPersonalAccessToken } from '../../src/domain/accounts.js';
import { authenticateApiRequest, presentedAccessToken } from '../../src/domain/api-authentication.js';
import type { UserRecord } from '../../src/domain/storage/records.js';
import { activeAndBlocked, issueAccessToken } from './fixtures.js';

describe('presentedAccessToken', () => {
  it.each([
    [{}, 'missing'],
    [{ authorization: 'Bearer tba_abc' }, { token: 'tba_abc', via: 'bearerAuth' }],
    [{ authorization: 'bearer  tba_abc/+.~-_=  ' }, { token: 'tba_abc/+.~-_=', via: 'bearerAuth' }],
    [{ accessTokenQuery: 'tba_abc' }, { token: 'tba_abc', via: 'accessTokenQuery' }],
    [{ authorization: 'Bearer tba_abc', accessTokenQuery: 'tba_abc' }, { token: 'tba_abc', via: 'bearerAuth' }],
    [{ authorization: 'Bearer tba_abc', accessTokenQuery: 'tba_xyz' }, 'invalid'],
    [{ authorization: 'Bearer' }, 'invalid'],
    [{ authorization: 'Bearer tba_abc tba_xyz' }, 'invalid'],
    [{ authorization: 'Basic dXNlcjpwYXNz' }, 'invalid'],
    [{ accessTokenQuery: '' }, 'invalid'],
    [{ accessTokenQuery: ['tba_abc', 'tba_abc'] }, 'invalid'],
  ])('%j: %j', (presented, expected) => {
    expect(presentedAccessToken(presented)).toEqual(expected);
  });
});

describe('authenticateApiRequest', () => {
  const now = 1_800_000_000;
  let users = activeAndBlocked();
  beforeEach(() => {
    users = activeAndBlocked();
  });
  const pat = async (user: UserRecord) => (await createPersonalAccessToken(users.storage, user.id, { name: 'ci', scopes: ['read_api'] })).token;
  const oauth = (user: UserRecord) => issueAccessToken(users.storage, user, { now, ttl: 60, scopes: ['read_user'] });

  it('authenticates the user of an OAuth token or a personal access token, with its scopes and how it came', async () => {
    const { storage, jane } = users;
    const token = await oauth(jane);
    expect(await authenticateApiRequest(storage, { authorization: `Bearer ${token}` }, now)).toEqual({ ok: true, principal: { user: jane, scopes: ['read_user'], via: 'bearerAuth', applicationId: null } });
    expect(await authenticateApiRequest(storage, { accessTokenQuery: token }, now)).toEqual({ ok: true, principal: { user: jane, scopes: ['read_user'], via: 'accessTokenQuery', applicationId: null } });
    // A personal access token's principal carries the token, for the calls about it (personal_access_tokens/self).
    expect(await authenticateApiRequest(storage, { privateToken: await pat(jane) }, now)).toEqual({
      ok: true,
      principal: { user: jane, scopes: ['read_api'], via: 'privateToken', applicationId: null, personalAccessToken: expect.objectContaining({ name: 'ci', user_id: jane.id }) },
    });
  });

  it('is missing when nothing is sent, and invalid for two methods at once, an empty, unknown or expired token, or a blocked user', async () => {
    const { storage, jane, blocked } = users;
    const token = await oauth(jane);
    const missing = { ok: false, reason: 'missing' };
    const invalid = { ok: false, reason: 'invalid' };
    expect(await authenticateApiRequest(storage, {}, now)).toEqual(missing);
    expect(await authenticateApiRequest(storage, { authorization: `Bearer ${token}`, privateToken: await pat(jane) }, now)).toEqual(invalid);
    expect(await authenticateApiRequest(storage, { privateToken: '' }, now)).toEqual(invalid);
    expect(await authenticateApiRequest(storage, { privateToken: 'tbpat-unknown' }, now)).toEqual(invalid);
    expect(await authenticateApiRequest(storage, { authorization: `Bearer ${token}` }, now + 60)).toEqual(invalid);
    expect(await authenticateApiRequest(storage, { privateToken: await pat(blocked) }, now)).toEqual(invalid);
    expect(await authenticateApiRequest(storage, { accessTokenQuery: await oauth(blocked) }, now)).toEqual(invalid);
  });
});
