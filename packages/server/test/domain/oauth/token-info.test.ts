// GET /oauth/token/info's answer as a plain function: what a live access token grants, and invalid_token for
// anything else, whichever way the token is presented.
import { beforeEach, describe, expect, it } from 'vitest';
import { registerApplication } from '../../../src/domain/applications.js';
import { tokenInfo } from '../../../src/domain/oauth/token-info.js';
import { digest } from '../../../src/domain/secrets.js';
import type { ApplicationRecord, Scope, UserRecord } from '../../../src/domain/storage/records.js';
import type { Storage } from '../../../src/domain/storage/index.js';
import { activeAndBlocked, issueAccessToken, oauthRefusal } from '../fixtures.js';

const now = 1_800_000_000;
const ttl = 7200;

let storage: Storage;
let jane: UserRecord;
let blocked: UserRecord;
let app: ApplicationRecord;
beforeEach(async () => {
  ({ storage, jane, blocked } = activeAndBlocked());
  app = (await registerApplication(storage, jane.id, { name: 'App', redirect_uris: ['https://app.example.com/cb'], uid: 'app-uid' })).record;
});

/** An access token issued at `now`, as the grants issue it; answers the plain token. */
const issue = (user: UserRecord, application: ApplicationRecord | null, scopes: Scope[] = ['read_api', 'read_user']) =>
  issueAccessToken(storage, user, { now, ttl, scopes, application_id: application?.id ?? null });

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

const invalidToken = { code: 'invalid_token', description: 'The access token is invalid', status: 401 };

describe('tokenInfo', () => {
  it('describes a live token: its user, scopes, time left, application and issue time', async () => {
    const token = await issue(jane, app);
    expect(await tokenInfo(storage, bearer(token), now)).toEqual({
      resource_owner_id: jane.id,
      scope: ['read_api', 'read_user'],
      expires_in: ttl,
      application: { uid: 'app-uid' },
      created_at: now,
    });
  });

  it('reads the token from the query as from the header, or both when they are the same', async () => {
    const token = await issue(jane, app);
    expect((await tokenInfo(storage, { accessTokenQuery: token }, now)).resource_owner_id).toBe(jane.id);
    expect((await tokenInfo(storage, { ...bearer(token), accessTokenQuery: token }, now)).resource_owner_id).toBe(jane.id);
  });

  it('counts expires_in down to the last second, then answers invalid_token', async () => {
    const token = await issue(jane, app);
    expect((await tokenInfo(storage, bearer(token), now + 100)).expires_in).toBe(ttl - 100);
    expect((await tokenInfo(storage, bearer(token), now + ttl - 1)).expires_in).toBe(1);
    expect(await oauthRefusal(tokenInfo(storage, bearer(token), now + ttl))).toEqual(invalidToken);
  });

  it('gives a password grant token without a client no application', async () => {
    expect((await tokenInfo(storage, bearer(await issue(jane, null, ['api'])), now)).application).toBeNull();
  });

  it('answers invalid_token for a revoked token, an unknown one, and a blocked user’s', async () => {
    const revoked = await issue(jane, app);
    await storage.tokens.revoke((await storage.tokens.byAccessDigest(digest(revoked)))!.id, now);
    expect(await oauthRefusal(tokenInfo(storage, bearer(revoked), now))).toEqual(invalidToken);
    expect(await oauthRefusal(tokenInfo(storage, bearer('tba_unknown'), now))).toEqual(invalidToken);
    expect(await oauthRefusal(tokenInfo(storage, bearer(await issue(blocked, app)), now))).toEqual(invalidToken);
  });

  it('answers invalid_token for nothing presented, a malformed header, and two different tokens', async () => {
    const token = await issue(jane, app);
    expect(await oauthRefusal(tokenInfo(storage, {}, now))).toEqual(invalidToken);
    for (const authorization of ['Bearer', `Bearer ${token} extra`, `Basic ${token}`, `Bearer ${token}\u00e9`]) {
      expect(await oauthRefusal(tokenInfo(storage, { authorization }, now)), authorization).toEqual(invalidToken);
    }
    expect(await oauthRefusal(tokenInfo(storage, { accessTokenQuery: [token, token] }, now))).toEqual(invalidToken);
    expect(await oauthRefusal(tokenInfo(storage, { ...bearer(token), accessTokenQuery: await issue(jane, app) }, now))).toEqual(invalidToken);
  });
});
