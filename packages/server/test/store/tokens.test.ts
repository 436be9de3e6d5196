// The tokens' port (domain/storage/tokens.ts) on every backend (backends.ts): personal access tokens, authorization
// codes and the token pairs an application holds, with the account they answer and their revocation.
import { describe, expect, it } from 'vitest';
import { everyBackend, newApplication, newCode, newPair, newToken, newUser, now, redeem, refusal, setting, useBackends } from './backends.js';

const { open } = useBackends();

describe.each(everyBackend)('tokens on %s', (name) => {
  describe('personal access tokens', () => {
    it("creates tokens, finds one by exact digest, lists a user's newest first, and refuses a digest in use", async () => {
      const { storages: [storage] } = await open(name);
      const user = await storage.users.create(newUser('jsmith'));
      const other = await storage.users.create(newUser('other'));
      // East of UTC, a last day read through a local Date would come back as the day before.
      const zone = process.env.TZ;
      process.env.TZ = 'Pacific/Auckland';
      try {
        const expiring = await storage.personalAccessTokens.create(newToken(user.id, 'digest-1', '2030-12-31'));
        expect(expiring).toEqual({ id: expect.any(Number), ...newToken(user.id, 'digest-1', '2030-12-31') });
        const lasting = await storage.personalAccessTokens.create(newToken(user.id, 'digest-2'));
        expect(lasting).toEqual({ id: expect.any(Number), ...newToken(user.id, 'digest-2') });
        const theirs = await storage.personalAccessTokens.create(newToken(other.id, 'digest-3'));
        expect((await storage.personalAccessTokens.withUserByDigest('digest-1'))?.token).toEqual(expiring);
        expect(await storage.personalAccessTokens.withUserByDigest('DIGEST-1')).toBeUndefined();
        expect((await storage.personalAccessTokens.withUserByDigest('digest-3'))?.user.id).toBe(other.id);
        expect(await storage.personalAccessTokens.ofUser(user.id)).toEqual([lasting, expiring]);
        expect(await storage.personalAccessTokens.ofUser(other.id)).toEqual([theirs]);
        expect(await refusal(storage.personalAccessTokens.create(newToken(other.id, 'digest-1')))).toEqual({ field: 'token', code: 'taken', message: 'this token is already in use' });
        expect(await storage.personalAccessTokens.ofUser(other.id)).toEqual([theirs]);
      } finally {
        if (zone === undefined) delete process.env.TZ;
        else process.env.TZ = zone;
      }
    });

    it("revokes the user's own token, answering it as it now is, again as often as asked; null for anyone else's or none", async () => {
      const { storages: [storage] } = await open(name);
      const user = await storage.users.create(newUser('jsmith'));
      const other = await storage.users.create(newUser('other'));
      const token = await storage.personalAccessTokens.create(newToken(user.id, 'digest-1'));
      expect(await storage.personalAccessTokens.revokeOwned(other.id, token.id)).toBeNull();
      expect(await storage.personalAccessTokens.revokeOwned(user.id, token.id + 1)).toBeNull();
      expect(await storage.personalAccessTokens.revokeOwned(user.id, Number.NaN)).toBeNull();
      expect((await storage.personalAccessTokens.withUserByDigest('digest-1'))?.token.revoked).toBe(false);
      expect(await storage.personalAccessTokens.revokeOwned(user.id, token.id)).toEqual({ ...token, revoked: true });
      expect(await storage.personalAccessTokens.revokeOwned(user.id, token.id)).toEqual({ ...token, revoked: true });
      expect((await storage.personalAccessTokens.withUserByDigest('digest-1'))?.token).toEqual({ ...token, revoked: true });
    });
  });

  describe('codes and tokens', () => {
    it('issues a pair outside any chain, finds it by either digest, revokes it once, and lists what a user holds unrevoked, oldest first', async () => {
      const { storages: [storage] } = await open(name);
      const user = await storage.users.create(newUser('jsmith'));
      const other = await storage.users.create(newUser('other'));
      const app = await storage.applications.create(newApplication(user.id, 'app'));
      await storage.tokens.issue(newPair('first', app.id, user.id, now - 300));
      await storage.tokens.issue({ ...newPair('password', null, user.id, now - 200), refresh_digest: null });
      await storage.tokens.issue(newPair('theirs', app.id, other.id, now - 100));
      const first = {
        id: 'first',
        token_digest: 'access-first',
        refresh_digest: 'refresh-first',
        application_id: app.id,
        user_id: user.id,
        scopes: ['api'],
        created_at: now - 300,
        expires_in: 7200,
        revoked_at: null,
        code_id: null,
        auth_time: null,
      };
      expect(await storage.tokens.byAccessDigest('access-first')).toEqual(first);
      expect(await storage.tokens.byRefreshDigest('refresh-first')).toEqual(first);
      expect(await storage.tokens.byAccessDigest('refresh-first')).toBeUndefined();
      expect(await storage.tokens.byRefreshDigest('access-first')).toBeUndefined();
      expect((await storage.tokens.unrevokedOfUser(user.id)).map((t) => t.id)).toEqual(['first', 'password']);
      await storage.tokens.revoke('first', now);
      await storage.tokens.revoke('first', now + 60);
      await storage.tokens.revoke('no-such-pair', now);
      expect(await storage.tokens.byAccessDigest('access-first')).toEqual({ ...first, revoked_at: now });
      expect(await storage.tokens.unrevokedOfUser(user.id)).toEqual([(await storage.tokens.byAccessDigest('access-password'))!]);
      expect((await storage.tokens.unrevokedOfUser(other.id)).map((t) => t.id)).toEqual(['theirs']);
    });

    it("answers an access token or a personal access token with its user's account: the user and their global setting once stored", async () => {
      const { storages: [storage] } = await open(name);
      const user = await storage.users.create(newUser('jsmith'));
      const other = await storage.users.create(newUser('other'));
      await storage.tokens.issue(newPair('mine', null, user.id));
      await storage.personalAccessTokens.create(newToken(user.id, 'pat-mine'));
      const accountOf = async () => {
        const viaToken = await storage.tokens.withUserByAccessDigest('access-mine');
        const viaPat = await storage.personalAccessTokens.withUserByDigest('pat-mine');
        expect(viaToken?.token.id).toBe('mine');
        expect(viaPat?.token.token_digest).toBe('pat-mine');
        expect({ user: viaPat?.user, globalSetting: viaPat?.globalSetting }).toEqual({ user: viaToken?.user, globalSetting: viaToken?.globalSetting });
        return { user: viaToken!.user, globalSetting: viaToken!.globalSetting };
      };
      expect(await accountOf()).toEqual({ user, globalSetting: undefined });
      // Another user's global setting and the user's own project setting are not theirs to answer.
      await storage.notificationSettings.change(setting(other.id, 'global', null, 'watch'), { events: {} });
      await storage.notificationSettings.change(setting(user.id, 'project', 1, 'disabled'), { events: {} });
      expect(await accountOf()).toEqual({ user, globalSetting: undefined });
      const global = await storage.notificationSettings.change(setting(user.id, 'global', null, 'custom'), { notification_email: 'j@example.com', events: { failed_pipeline: true } });
      expect(await accountOf()).toEqual({ user, globalSetting: global });
      expect(global).toMatchObject({ level: 'custom', notification_email: 'j@example.com', events: { failed_pipeline: true } });
      expect(await storage.tokens.withUserByAccessDigest('access-nothing')).toBeUndefined();
    });

    it("revokes an application's authorization of a user, answering whether there was a live pair or a pending code", async () => {
      const { storages: [storage] } = await open(name);
      const user = await storage.users.create(newUser('jsmith'));
      const other = await storage.users.create(newUser('other'));
      const [a, b, c, d] = await Promise.all(['a', 'b', 'c', 'd'].map((uid) => storage.applications.create(newApplication(other.id, uid))));
      expect(await storage.tokens.revokeAuthorization(user.id, a!.id, now)).toBe(false);

      await storage.tokens.issue(newPair('user-a', a!.id, user.id));
      await storage.tokens.issue(newPair('user-b', b!.id, user.id));
      await storage.tokens.issue(newPair('other-a', a!.id, other.id));
      await storage.tokens.issue(newPair('user-password', null, user.id));
      expect(await storage.tokens.revokeAuthorization(user.id, a!.id, now)).toBe(true);
      expect((await storage.tokens.unrevokedOfUser(user.id)).map((t) => t.id)).toEqual(['user-b', 'user-password']);
      expect((await storage.tokens.byAccessDigest('access-user-a'))?.revoked_at).toBe(now);
      expect((await storage.tokens.unrevokedOfUser(other.id)).map((t) => t.id)).toEqual(['other-a']);
      expect(await storage.tokens.revokeAuthorization(user.id, a!.id, now + 1)).toBe(false);
      expect((await storage.tokens.byAccessDigest('access-user-a'))?.revoked_at).toBe(now);

      // null: the password grant without a client, nothing else.
      expect(await storage.tokens.revokeAuthorization(user.id, null, now)).toBe(true);
      expect((await storage.tokens.unrevokedOfUser(user.id)).map((t) => t.id)).toEqual(['user-b']);
      expect(await storage.tokens.revokeAuthorization(user.id, null, now)).toBe(false);

      // A pending code alone counts, and is dropped.
      await storage.codes.create(newCode('pending', c!.id, user.id));
      await storage.codes.create(newCode('someone-elses', c!.id, other.id));
      expect(await storage.tokens.revokeAuthorization(user.id, c!.id, now)).toBe(true);
      expect(await storage.tokens.revokeAuthorization(user.id, c!.id, now)).toBe(false);
      expect(await redeem(storage, 'pending', c!.id)).toBe('unknown');
      expect(await redeem(storage, 'someone-elses', c!.id)).toBe('issued');

      // A used or expired code does not count, but is dropped all the same.
      await storage.codes.create(newCode('used', d!.id, user.id, { used_at: now - 10 }));
      await storage.codes.create(newCode('expired', d!.id, user.id, { expires_at: now }));
      expect(await storage.tokens.revokeAuthorization(user.id, d!.id, now)).toBe(false);
      expect(await redeem(storage, 'used', d!.id)).toBe('unknown');
      expect(await redeem(storage, 'expired', d!.id)).toBe('unknown');
      expect(await storage.tokens.revokeAuthorization(user.id, Number.NaN, now)).toBe(false);
    });
  });
});
