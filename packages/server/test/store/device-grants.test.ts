// The device authorization port (domain/storage/device-grants.ts) on every backend: a device authorization is stored
// by its digests, found by its user code, answered once and redeemed once, with the domain's rules run on the stored
// version; on PostgreSQL, from two pools at once as two instances would, of many concurrent answers or redeeming polls
// exactly one wins. Revoking an application's authorization, deleting the application and pruning take them too.
import { describe, expect, it } from 'vitest';
import type { DeviceGrantRecord, DevicePollStep, NewTokenPair, Storage, StoredDeviceGrant } from '../../src/domain/storage/index.js';
import { day, everyBackend, newApplication, newUser, now, onPostgres, inMemory, refusal, useBackends } from './backends.js';

const { open } = useBackends();

const newDeviceGrant = (id: string, applicationId: number, fields: Partial<DeviceGrantRecord> = {}): DeviceGrantRecord => ({
  id,
  device_code_digest: `device-digest-${id}`,
  user_code_digest: `user-digest-${id}`,
  application_id: applicationId,
  scopes: ['api', 'read_user'],
  created_at: now - 60,
  expires_at: now + 240,
  interval: 5,
  last_polled_at: null,
  decision: null,
  user_id: null,
  decided_at: null,
  auth_time: null,
  redeemed_at: null,
  ...fields,
});

/** jsmith (1) owns the applications 1 (the device's) and 2. */
async function withApplications(name: string) {
  const subject = await open(name);
  const [storage] = subject.storages;
  const user = await storage.users.create(newUser('jsmith'));
  for (const uid of ['cli', 'other']) await storage.applications.create(newApplication(user.id, uid));
  return { ...subject, storage, userId: user.id };
}

const pairOf = (grant: StoredDeviceGrant, id = `pair-of-${grant.id}-${Math.random().toString(36).slice(2)}`): NewTokenPair => ({
  id,
  token_digest: `access-${id}`,
  refresh_digest: `refresh-${id}`,
  application_id: grant.application_id,
  user_id: grant.user_id!,
  scopes: grant.scopes,
  now,
  ttl: 7200,
  auth_time: grant.auth_time,
});
const redeem = (): DevicePollStep<string> => ({ step: 'redeem' });
const approval = (userId: number) => ({ decision: 'approved' as const, user_id: userId, auth_time: now - 600 });
const unanswered = (grant: DeviceGrantRecord) => (grant.decision === null ? undefined : 'answered');

describe.each(everyBackend)('device authorizations on %s', (name) => {
  it('are stored by their digests and found by the user code\'s', async () => {
    const { storage } = await withApplications(name);
    const grant = newDeviceGrant('d1', 1);
    await storage.deviceGrants.create(grant);
    expect(await storage.deviceGrants.byUserCode('user-digest-d1')).toEqual(grant);
    expect(await storage.deviceGrants.byUserCode('device-digest-d1')).toBeUndefined();
    expect(await refusal(storage.deviceGrants.create({ ...newDeviceGrant('d2', 1), user_code_digest: 'user-digest-d1' }))).toEqual({
      field: 'user_code',
      code: 'taken',
      message: 'this code is already in use',
    });
    expect(await storage.deviceGrants.byUserCode('user-digest-d2')).toBeUndefined();
  });

  it('are answered once: the check runs on the stored version, and a refusal changes nothing', async () => {
    const { storage, userId } = await withApplications(name);
    await storage.deviceGrants.create(newDeviceGrant('d1', 1));
    expect(await storage.deviceGrants.answer('no-such-digest', unanswered, approval(userId), now)).toEqual({ outcome: 'unknown' });
    expect(await storage.deviceGrants.answer('user-digest-d1', () => 'expired', approval(userId), now)).toEqual({ outcome: 'refused', reason: 'expired' });
    expect((await storage.deviceGrants.byUserCode('user-digest-d1'))!.decision).toBeNull();
    const answered = await storage.deviceGrants.answer('user-digest-d1', unanswered, approval(userId), now);
    expect(answered).toEqual({ outcome: 'answered', grant: { ...newDeviceGrant('d1', 1), decision: 'approved', user_id: userId, auth_time: now - 600, decided_at: now } });
    expect(await storage.deviceGrants.answer('user-digest-d1', unanswered, { decision: 'denied', user_id: userId, auth_time: null }, now)).toEqual({ outcome: 'refused', reason: 'answered' });
    expect(await storage.deviceGrants.byUserCode('user-digest-d1')).toMatchObject({ decision: 'approved' });
  });

  it('answer a poll as the domain judges it: nothing changed on a refusal, the poll\'s time noted on a wait', async () => {
    const { storage } = await withApplications(name);
    await storage.deviceGrants.create(newDeviceGrant('d1', 1));
    const seen: StoredDeviceGrant[] = [];
    const judge = (step: DevicePollStep<string>) => (grant: StoredDeviceGrant) => (seen.push(grant), step);
    expect(await storage.deviceGrants.poll('device-digest-d1', 1, judge({ step: 'refuse', reason: 'slow_down' }), pairOf, now)).toEqual({ outcome: 'refused', reason: 'slow_down' });
    expect((await storage.deviceGrants.byUserCode('user-digest-d1'))!.last_polled_at).toBeNull();
    expect(await storage.deviceGrants.poll('device-digest-d1', 1, judge({ step: 'wait', reason: 'authorization_pending' }), pairOf, now + 7)).toEqual({
      outcome: 'refused',
      reason: 'authorization_pending',
    });
    expect((await storage.deviceGrants.byUserCode('user-digest-d1'))!.last_polled_at).toBe(now + 7);
    expect(seen[0]).toEqual({ ...newDeviceGrant('d1', 1), user: undefined });
  });

  it('redeem once, into a chain of the device authorization\'s own, with the answering user\'s standing', async () => {
    const { storage, userId, rows } = await withApplications(name);
    await storage.deviceGrants.create(newDeviceGrant('d1', 1, approval(userId)));
    let judged: StoredDeviceGrant | undefined;
    const outcome = await storage.deviceGrants.poll('device-digest-d1', 1, (grant) => ((judged = grant), redeem()), (grant) => pairOf(grant, 'p1'), now);
    expect(outcome).toEqual({ outcome: 'issued' });
    expect(judged).toMatchObject({ decision: 'approved', user_id: userId, user: { state: 'active' } });
    expect(await storage.tokens.byAccessDigest('access-p1')).toMatchObject({ id: 'p1', user_id: userId, application_id: 1, code_id: 'd1', scopes: ['api', 'read_user'] });
    expect((await storage.deviceGrants.byUserCode('user-digest-d1'))!.redeemed_at).toBe(now);
    expect(await storage.deviceGrants.poll('device-digest-d1', 1, redeem, pairOf, now)).toEqual({ outcome: 'unknown' });
    expect((await rows('access_tokens')).length).toBe(1);
  });

  it('are unknown to another client, to a device code never issued, and to a user code\'s digest', async () => {
    const { storage, userId } = await withApplications(name);
    await storage.deviceGrants.create(newDeviceGrant('d1', 1, approval(userId)));
    for (const [digest, client] of [['device-digest-d1', 2], ['no-such-digest', 1], ['user-digest-d1', 1]] as const) {
      expect(await storage.deviceGrants.poll(digest, client, redeem, pairOf, now)).toEqual({ outcome: 'unknown' });
    }
    expect(await storage.deviceGrants.poll('device-digest-d1', 1, redeem, pairOf, now)).toEqual({ outcome: 'issued' });
  });

  it('approved ones go when the user revokes the application, and all of an application\'s when it is deleted', async () => {
    const { storage, userId } = await withApplications(name);
    await storage.deviceGrants.create(newDeviceGrant('approved', 1, approval(userId)));
    await storage.deviceGrants.create(newDeviceGrant('pending', 1));
    await storage.deviceGrants.create(newDeviceGrant('other', 2, approval(userId)));
    expect(await storage.tokens.revokeAuthorization(userId, 1, now)).toBe(true);
    expect(await storage.deviceGrants.byUserCode('user-digest-approved')).toBeUndefined();
    expect(await storage.deviceGrants.byUserCode('user-digest-pending')).toBeDefined();
    expect(await storage.deviceGrants.byUserCode('user-digest-other')).toBeDefined();
    // Nothing left to revoke: the pending one is no one's yet.
    expect(await storage.tokens.revokeAuthorization(userId, 1, now)).toBe(false);
    expect(await storage.applications.deleteOwned(userId, 1, now)).toBe(true);
    expect(await storage.deviceGrants.byUserCode('user-digest-pending')).toBeUndefined();
    expect(await storage.deviceGrants.byUserCode('user-digest-other')).toBeDefined();
  });

  it('are pruned at expiry when nobody answered them, and a day after it when someone did', async () => {
    const { storage, userId } = await withApplications(name);
    await storage.deviceGrants.create(newDeviceGrant('old-approved', 1, { expires_at: now - day - 1, ...approval(userId) }));
    await storage.deviceGrants.create(newDeviceGrant('recent-approved', 1, { expires_at: now - 60, ...approval(userId) }));
    await storage.deviceGrants.create(newDeviceGrant('expired-unanswered', 1, { expires_at: now }));
    await storage.deviceGrants.create(newDeviceGrant('waiting', 1, { expires_at: now + 1 }));
    expect(await storage.maintenance.prune(now)).toMatchObject({ deviceGrants: 2 });
    for (const [id, kept] of [['old-approved', false], ['recent-approved', true], ['expired-unanswered', false], ['waiting', true]] as const) {
      expect(await storage.deviceGrants.byUserCode(`user-digest-${id}`), id).toEqual(kept ? expect.objectContaining({ id }) : undefined);
    }
  });

  it('count a client\'s unanswered, unexpired ones', async () => {
    const { storage, userId } = await withApplications(name);
    await storage.deviceGrants.create(newDeviceGrant('waiting', 1));
    await storage.deviceGrants.create(newDeviceGrant('waiting-too', 1, { expires_at: now + 1 }));
    await storage.deviceGrants.create(newDeviceGrant('expired', 1, { expires_at: now }));
    await storage.deviceGrants.create(newDeviceGrant('answered', 1, approval(userId)));
    await storage.deviceGrants.create(newDeviceGrant('another-client', 2));
    expect(await storage.deviceGrants.pendingCount(1, now)).toBe(2);
    expect(await storage.deviceGrants.pendingCount(2, now)).toBe(1);
    expect(await storage.deviceGrants.pendingCount(1, now + 1)).toBe(1);
  });
});

/** Every storage of the backend in turn, as concurrent requests would reach the instances. */
const on = (storages: Storage[], i: number) => storages[i % storages.length]!;
const tally = (outcomes: { outcome: string }[]) => outcomes.reduce<Record<string, number>>((t, o) => ({ ...t, [o.outcome]: (t[o.outcome] ?? 0) + 1 }), {});

describe.each([inMemory, onPostgres])('racing for one device authorization on %s', (name) => {
  it('lets one of twenty answers at the same moment win, approvals and denials alike', async () => {
    const { storages, userId } = await withApplications(name);
    await storages[0].deviceGrants.create(newDeviceGrant('d1', 1));
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        on(storages, i).deviceGrants.answer('user-digest-d1', unanswered, { decision: i % 2 ? 'denied' : 'approved', user_id: userId, auth_time: null }, now),
      ),
    );
    expect(tally(outcomes)).toEqual({ answered: 1, refused: 19 });
    const winner = outcomes.find((o) => o.outcome === 'answered')!;
    expect(await storages[0].deviceGrants.byUserCode('user-digest-d1')).toEqual((winner as { grant: DeviceGrantRecord }).grant);
  });

  it('lets one of twenty redeeming polls at the same moment get tokens', async () => {
    const { storages, userId, rows } = await withApplications(name);
    await storages[0].deviceGrants.create(newDeviceGrant('d1', 1, approval(userId)));
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => on(storages, i).deviceGrants.poll('device-digest-d1', 1, redeem, pairOf, now)));
    expect(tally(outcomes)).toEqual({ issued: 1, unknown: 19 });
    expect((await rows('access_tokens')).map((t) => t.code_id)).toEqual(['d1']);
  });

  it('never issues for an answer that a revocation racing the poll took away', async () => {
    const { storages, userId, rows } = await withApplications(name);
    for (let round = 0; round < 5; round++) {
      await storages[0].deviceGrants.create(newDeviceGrant(`d${round}`, 1, approval(userId)));
      const [polled] = await Promise.all([
        on(storages, round).deviceGrants.poll(`device-digest-d${round}`, 1, redeem, pairOf, now),
        on(storages, round + 1).tokens.revokeAuthorization(userId, 1, now),
      ]);
      // Either the poll came first and its pair was revoked with the rest, or the revocation came first and the poll
      // found nothing: nothing issued from the device authorization outlives the revocation.
      const alive = (await rows('access_tokens')).filter((t) => t.revoked_at === null);
      expect(alive, JSON.stringify(polled)).toEqual([]);
    }
  });
});
