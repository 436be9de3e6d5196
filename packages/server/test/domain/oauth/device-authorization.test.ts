// The device authorization grant outside the token endpoint (RFC 8628): the device authorization endpoint, the user
// code as people type it, the verification page's lookup and answer, and what a poll is answered, on a memory storage
// (test/http/device-grant.test.ts drives the same over HTTP).
import { beforeEach, describe, expect, it } from 'vitest';
import { registerApplication } from '../../../src/domain/applications.js';
import {
  answerDeviceAuthorization,
  displayUserCode,
  lookUpDeviceAuthorization,
  normaliseUserCode,
  pollStep,
  startDeviceAuthorization,
} from '../../../src/domain/oauth/device-authorization.js';
import { LoginThrottledError } from '../../../src/domain/login-throttle.js';
import { OAuthError } from '../../../src/domain/oauth/errors.js';
import { digest } from '../../../src/domain/secrets.js';
import type { Storage, StoredDeviceGrant } from '../../../src/domain/storage/index.js';
import type { ApplicationRecord, UserRecord } from '../../../src/domain/storage/records.js';
import { StoreBuilder, oauthRefusal } from '../fixtures.js';

const now = 1_800_000_000;
const settings = { baseUrl: 'https://tokenbell.example', now, expiresIn: 300, interval: 5, pendingPerClient: 100 };

let storage: Storage;
let jane: UserRecord;
let cli: ApplicationRecord;
beforeEach(async () => {
  const builder = new StoreBuilder();
  jane = builder.user('jane');
  builder.user('blocked', { state: 'blocked' });
  storage = builder.storage();
  ({ record: cli } = await registerApplication(storage, jane.id, { name: 'CLI', redirect_uris: ['http://127.0.0.1/cb'], scopes: ['api', 'read_user'], confidential: false }));
});

describe('user codes as people type them', () => {
  it.each([
    ['WDJBMJHT', 'WDJBMJHT'],
    ['wdjb-mjht', 'WDJBMJHT'],
    [' Wdjb mJht ', 'WDJBMJHT'],
    ['WD-JB - MJ HT', 'WDJBMJHT'],
    ['WDJB-MJH', undefined],
    ['WDJB-MJHTX', undefined],
    ['WDJB_MJHT', undefined],
    ['', undefined],
  ])('%j is %j', (typed, code) => {
    expect(normaliseUserCode(typed)).toBe(code);
  });

  it('are shown in two halves', () => {
    expect(displayUserCode('WDJBMJHT')).toBe('WDJB-MJHT');
  });
});

describe('startDeviceAuthorization (section 3.1-3.2)', () => {
  it('refuses a client whose unanswered, unexpired device authorizations are at the limit, and only that client', async () => {
    const limited = { ...settings, pendingPerClient: 2 };
    const first = await startDeviceAuthorization(storage, cli, {}, limited);
    await startDeviceAuthorization(storage, cli, {}, limited);
    await expect(startDeviceAuthorization(storage, cli, {}, limited)).rejects.toThrow(LoginThrottledError);
    const { record: other } = await registerApplication(storage, jane.id, { name: 'Other CLI', redirect_uris: ['http://127.0.0.1/cb'], confidential: false });
    await startDeviceAuthorization(storage, other, {}, limited);
    // An answer, or the time running out, makes room.
    await answerDeviceAuthorization(storage, first.user_code, { user_id: jane.id, decision: 'deny', auth_time: now }, now);
    await startDeviceAuthorization(storage, cli, {}, limited);
    await expect(startDeviceAuthorization(storage, cli, {}, limited)).rejects.toThrow(LoginThrottledError);
    await startDeviceAuthorization(storage, cli, {}, { ...limited, now: now + settings.expiresIn });
  });

  it('answers the codes, the page and the timing, and stores the codes as digests of the application\'s scopes', async () => {
    const answer = await startDeviceAuthorization(storage, cli, {}, settings);
    expect(answer).toEqual({
      device_code: expect.stringMatching(/^tbdc_[0-9A-Za-z]{43}$/),
      user_code: expect.stringMatching(/^[0-9A-Z]{8}$/),
      verification_uri: 'https://tokenbell.example/oauth/device',
      verification_uri_complete: `https://tokenbell.example/oauth/device?user_code=${answer.user_code}`,
      expires_in: 300,
      interval: 5,
    });
    expect(await storage.deviceGrants.byUserCode(digest(answer.user_code))).toMatchObject({
      device_code_digest: digest(answer.device_code),
      application_id: cli.id,
      scopes: ['api', 'read_user'],
      created_at: now,
      expires_at: now + 300,
      interval: 5,
      decision: null,
    });
  });

  it('narrows the scope, and refuses one beyond the application\'s with invalid_scope', async () => {
    const { user_code } = await startDeviceAuthorization(storage, cli, { scope: 'read_api' }, settings);
    expect((await storage.deviceGrants.byUserCode(digest(user_code)))!.scopes).toEqual(['read_api']);
    expect(await oauthRefusal(startDeviceAuthorization(storage, cli, { scope: 'openid' }, settings))).toMatchObject({ status: 400, code: 'invalid_scope' });
  });

  it('is approved at once by the automatic approval\'s user, unless they cannot act', async () => {
    const auto = await startDeviceAuthorization(storage, cli, {}, { ...settings, approvedBy: 'jane' });
    expect(await storage.deviceGrants.byUserCode(digest(auto.user_code))).toMatchObject({ decision: 'approved', user_id: jane.id, decided_at: now, auth_time: now });
    for (const approvedBy of ['blocked', 'nobody']) {
      const { user_code } = await startDeviceAuthorization(storage, cli, {}, { ...settings, approvedBy });
      expect(await storage.deviceGrants.byUserCode(digest(user_code))).toMatchObject({ decision: null, user_id: null });
    }
  });
});

describe('the verification page\'s lookup and answer (section 3.3)', () => {
  it('finds a pending code however it is typed, with its application and scopes', async () => {
    const { user_code } = await startDeviceAuthorization(storage, cli, { scope: 'read_user' }, settings);
    const typed = `${user_code.slice(0, 4).toLowerCase()}-${user_code.slice(4)}`;
    expect(await lookUpDeviceAuthorization(storage, typed, now)).toEqual({ outcome: 'pending', userCode: user_code, application: cli, scopes: ['read_user'] });
    expect(await lookUpDeviceAuthorization(storage, 'ZZZZZZZZ', now)).toEqual({ outcome: 'unknown' });
    expect(await lookUpDeviceAuthorization(storage, 'not a code', now)).toEqual({ outcome: 'unknown' });
    expect(await lookUpDeviceAuthorization(storage, user_code, now + 300)).toEqual({ outcome: 'expired' });
  });

  it('records one answer; after it the code is answered, and an expired one cannot be', async () => {
    const { user_code } = await startDeviceAuthorization(storage, cli, {}, settings);
    const approve = { user_id: jane.id, decision: 'approve' as const, auth_time: now - 60 };
    expect(await answerDeviceAuthorization(storage, user_code.toLowerCase(), approve, now + 10)).toEqual({ outcome: 'recorded', application: cli, scopes: ['api', 'read_user'], decision: 'approve' });
    expect(await storage.deviceGrants.byUserCode(digest(user_code))).toMatchObject({ decision: 'approved', user_id: jane.id, auth_time: now - 60, decided_at: now + 10 });
    expect(await answerDeviceAuthorization(storage, user_code, { ...approve, decision: 'deny' }, now + 20)).toEqual({ outcome: 'answered' });
    expect(await lookUpDeviceAuthorization(storage, user_code, now + 20)).toEqual({ outcome: 'answered' });

    const late = await startDeviceAuthorization(storage, cli, {}, settings);
    expect(await answerDeviceAuthorization(storage, late.user_code, approve, now + 300)).toEqual({ outcome: 'expired' });
    expect(await answerDeviceAuthorization(storage, 'AAAA', approve, now)).toEqual({ outcome: 'unknown' });
  });

  it('keeps no sign-in time for a denial', async () => {
    const { user_code } = await startDeviceAuthorization(storage, cli, {}, settings);
    await answerDeviceAuthorization(storage, user_code, { user_id: jane.id, decision: 'deny', auth_time: now - 60 }, now);
    expect(await storage.deviceGrants.byUserCode(digest(user_code))).toMatchObject({ decision: 'denied', auth_time: null });
  });
});

describe('pollStep (section 3.5)', () => {
  const grant = (fields: Partial<StoredDeviceGrant> = {}): StoredDeviceGrant => ({
    id: 'g',
    device_code_digest: 'd',
    user_code_digest: 'u',
    application_id: 1,
    scopes: ['api'],
    created_at: now,
    expires_at: now + 300,
    interval: 5,
    last_polled_at: null,
    decision: null,
    user_id: null,
    decided_at: null,
    auth_time: null,
    redeemed_at: null,
    user: undefined,
    ...fields,
  });
  const answer = (step: ReturnType<typeof pollStep>) => (step.step === 'redeem' ? 'redeem' : `${step.step} ${(step.reason as OAuthError).code}`);
  const approved = { decision: 'approved' as const, user_id: 1, user: { state: 'active' as const } };

  it('tells a device to wait, noting the poll, until the user answers', () => {
    expect(answer(pollStep(grant(), now))).toBe('wait authorization_pending');
    expect(answer(pollStep(grant({ last_polled_at: now - 5 }), now))).toBe('wait authorization_pending');
  });

  it('tells a device that polls sooner than the interval to slow down, without noting that poll', () => {
    expect(answer(pollStep(grant({ last_polled_at: now - 4 }), now))).toBe('refuse slow_down');
    expect(answer(pollStep(grant({ last_polled_at: now }), now))).toBe('refuse slow_down');
  });

  it('redeems an approval whatever the interval, and denies a denial', () => {
    expect(answer(pollStep(grant({ ...approved, last_polled_at: now }), now))).toBe('redeem');
    expect(answer(pollStep(grant({ decision: 'denied', user_id: 1 }), now))).toBe('refuse access_denied');
  });

  it('refuses an approval by a user who was blocked since, and everything once expired', () => {
    expect(answer(pollStep(grant({ ...approved, user: { state: 'blocked' } }), now))).toBe('refuse invalid_grant');
    expect(answer(pollStep(grant({ ...approved, user: undefined }), now))).toBe('refuse invalid_grant');
    for (const fields of [{}, approved, { decision: 'denied' as const, user_id: 1 }]) {
      expect(answer(pollStep(grant(fields), now + 300))).toBe('refuse expired_token');
    }
  });

  it('words each answer as the document\'s examples do', () => {
    expect((pollStep(grant(), now) as { reason: OAuthError }).reason.toJSON()).toEqual({
      error: 'authorization_pending',
      error_description: 'The user has not yet approved or denied the request; keep polling at the interval.',
    });
  });
});
