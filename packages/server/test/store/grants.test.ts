// The token endpoint's single-use steps on each store (the file store, PostgreSQL), and on PostgreSQL from two pools
// at once, as two instances would: a code is redeemed at most once and a replay kills its chain; a refresh token
// rotates at most once and a replay kills the chain; a rotation racing a replay leaves nothing alive.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { GrantStorage, NewTokenPair } from '../../src/domain/storage/index.js';
import { inMemory, newApplication, newCode, newUser, now, onPostgres, useBackends } from './backends.js';

const client = 1;

interface Subject {
  /** One handle per instance: the file store has one, PostgreSQL two pools. */
  storages: GrantStorage[];
  addCode(id: string, codeDigest: string, applicationId: number): Promise<void>;
  /** Ids of the tokens still usable. */
  alive(): Promise<string[]>;
  /** The user revoking the client's authorization (TokenStorage.revokeAuthorization), on the last instance. */
  revokeAuthorization(): Promise<boolean>;
}

const { open } = useBackends();

/** The backend with user 1 and its applications 1 (the client) and 2, which the codes and tokens belong to. */
async function grantsOn(name: string): Promise<Subject> {
  const { storages, rows } = await open(name);
  const [storage] = storages;
  const user = await storage.users.create(newUser('jsmith'));
  for (const uid of ['a1', 'a2']) await storage.applications.create(newApplication(user.id, uid));
  return {
    storages: storages.map((s) => s.grants),
    revokeAuthorization: () => storages.at(-1)!.tokens.revokeAuthorization(1, client, now),
    addCode: (id, codeDigest, applicationId) => storage.codes.create({ ...newCode(id, applicationId, 1), code_digest: codeDigest }),
    alive: async () => (await rows('access_tokens')).filter((t) => t.revoked_at === null).map((t) => t.id as string),
  };
}

const random = () => randomBytes(16).toString('hex');
/** A new pair; its refresh digest is returned through `issued` so that tests can rotate it. */
const pairFactory = (issued: string[]) => (): NewTokenPair => {
  const refreshDigest = random();
  issued.push(refreshDigest);
  return { id: random(), token_digest: random(), refresh_digest: refreshDigest, application_id: client, user_id: 1, scopes: ['api'], now, ttl: 7200, auth_time: now - 60 };
};
const pass = () => undefined;
const tally = (outcomes: { outcome: string }[]) => outcomes.reduce<Record<string, number>>((t, o) => ({ ...t, [o.outcome]: (t[o.outcome] ?? 0) + 1 }), {});
/** Spreads calls over the subject's instances. */
const on = (subject: Subject, i: number) => subject.storages[i % subject.storages.length]!;

describe.each([inMemory, onPostgres])('single-use grants on %s', (name) => {
  const subject = () => grantsOn(name);

  it('redeems a code once among twenty at the same moment, and the replays kill what it issued', async () => {
    const s = await subject();
    await s.addCode('code-1', 'digest-1', client);
    const issued: string[] = [];
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => on(s, i).redeemCode('digest-1', client, pass, pairFactory(issued), now)));
    expect(tally(outcomes)).toEqual({ issued: 1, replayed: 19 });
    expect(await s.alive()).toEqual([]);
  });

  it('burns nothing when the check refuses, or for another client, or for an unknown code', async () => {
    const s = await subject();
    await s.addCode('code-2', 'digest-2', client);
    const issued: string[] = [];
    expect(await on(s, 0).redeemCode('digest-2', client, () => 'expired', pairFactory(issued), now)).toEqual({ outcome: 'refused', reason: 'expired' });
    expect(await on(s, 1).redeemCode('digest-2', 2, pass, pairFactory(issued), now)).toEqual({ outcome: 'unknown' });
    expect(await on(s, 0).redeemCode('no-such-digest', client, pass, pairFactory(issued), now)).toEqual({ outcome: 'unknown' });
    expect(await on(s, 1).redeemCode('digest-2', client, (code) => (code.redirect_uri === 'https://app.example.com/cb' ? undefined : 'redirect'), pairFactory(issued), now)).toEqual({ outcome: 'issued' });
    expect(await s.alive()).toHaveLength(1);
  });

  it("hands the code's nonce and sign-in time to the checks, and keeps the sign-in time along the refresh chain", async () => {
    const { storages } = await open(name);
    const [storage] = storages;
    const user = await storage.users.create(newUser('jsmith'));
    const app = await storage.applications.create(newApplication(user.id, 'a1'));
    await storage.codes.create(newCode('code-oidc', app.id, user.id, { code_digest: 'digest-oidc', nonce: 'n-0S6_WzA2Mj', auth_time: now - 300 }));
    const seen: unknown[] = [];
    const pair = (id: string, refresh: string) => (stored: { auth_time?: number | null }): NewTokenPair => ({
      id, token_digest: `t-${id}`, refresh_digest: refresh, application_id: app.id, user_id: user.id, scopes: ['openid'], now, ttl: 7200, auth_time: stored.auth_time ?? null,
    });
    const redeemed = await storage.grants.redeemCode('digest-oidc', app.id, (code) => void seen.push([code.nonce, code.auth_time]), pair('p1', 'r1'), now);
    expect(redeemed).toEqual({ outcome: 'issued' });
    const rotated = await storage.grants.rotateRefresh('r1', app.id, (previous) => void seen.push(previous.auth_time), pair('p2', 'r2'), now);
    expect(rotated).toEqual({ outcome: 'issued' });
    await storage.grants.rotateRefresh('r2', app.id, (previous) => void seen.push(previous.auth_time), pair('p3', 'r3'), now);
    expect(seen).toEqual([['n-0S6_WzA2Mj', now - 300], now - 300, now - 300]);
    expect((await storage.tokens.byAccessDigest('t-p3'))?.auth_time).toBe(now - 300);
  });

  it('rotates a refresh token once among ten at the same moment, and the replays kill the chain', async () => {
    const s = await subject();
    await s.addCode('code-3', 'digest-3', client);
    const issued: string[] = [];
    await on(s, 0).redeemCode('digest-3', client, pass, pairFactory(issued), now);
    const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => on(s, i).rotateRefresh(issued[0]!, client, pass, pairFactory(issued), now)));
    expect(tally(outcomes)).toEqual({ issued: 1, replayed: 9 });
    expect(await s.alive()).toEqual([]);
  });

  it('leaves nothing of the chain alive when a rotation races a replay, round after round', async () => {
    const s = await subject();
    for (let round = 0; round < 15; round++) {
      await s.addCode(`race-${round}`, `race-digest-${round}`, client);
      const issued: string[] = [];
      await on(s, 0).redeemCode(`race-digest-${round}`, client, pass, pairFactory(issued), now);
      await on(s, 1).rotateRefresh(issued[0]!, client, pass, pairFactory(issued), now);
      // The legitimate client rotates the newest token while a thief replays the first.
      const [legit, replay] = await Promise.all([
        on(s, round).rotateRefresh(issued[1]!, client, pass, pairFactory(issued), now),
        on(s, round + 1).rotateRefresh(issued[0]!, client, pass, pairFactory(issued), now),
      ]);
      expect(replay.outcome, `round ${round}`).toBe('replayed');
      expect(['issued', 'replayed'], `round ${round}`).toContain(legit.outcome);
      expect(await s.alive(), `round ${round}`).toEqual([]);
    }
  });

  it('leaves nothing alive when the user revokes the authorization while a rotation is under way, round after round', async () => {
    const s = await subject();
    for (let round = 0; round < 15; round++) {
      await s.addCode(`revoke-${round}`, `revoke-digest-${round}`, client);
      const issued: string[] = [];
      await on(s, 0).redeemCode(`revoke-digest-${round}`, client, pass, pairFactory(issued), now);
      const [rotation, revoked] = await Promise.all([on(s, 0).rotateRefresh(issued[0]!, client, pass, pairFactory(issued), now), s.revokeAuthorization()]);
      expect(revoked, `round ${round}`).toBe(true);
      expect(['issued', 'replayed'], `round ${round}`).toContain(rotation.outcome);
      expect(await s.alive(), `round ${round}`).toEqual([]);
    }
  });

  it('refuses a refresh for another client or when the check refuses, burning nothing', async () => {
    const s = await subject();
    await s.addCode('code-4', 'digest-4', client);
    const issued: string[] = [];
    await on(s, 0).redeemCode('digest-4', client, pass, pairFactory(issued), now);
    expect(await on(s, 1).rotateRefresh(issued[0]!, 2, pass, pairFactory(issued), now)).toEqual({ outcome: 'unknown' });
    expect(await on(s, 0).rotateRefresh(issued[0]!, client, () => 'invalid_scope', pairFactory(issued), now)).toEqual({ outcome: 'refused', reason: 'invalid_scope' });
    expect(await on(s, 1).rotateRefresh(issued[0]!, client, pass, pairFactory(issued), now)).toEqual({ outcome: 'issued' });
    expect(await s.alive()).toHaveLength(1);
  });
});
