// The applications' port (domain/storage/applications.ts) on every backend (backends.ts): an owner's OAuth
// applications, found by id or by exact App ID, and deleted with what they issued.
import { describe, expect, it } from 'vitest';
import { everyBackend, newApplication, newCode, newPair, newUser, now, redeem, refusal, useBackends } from './backends.js';

const { open } = useBackends();

describe.each(everyBackend)('applications on %s', (name) => {
  it("creates applications, finds them by id and by exact App ID, lists an owner's oldest first, and refuses an App ID in use", async () => {
    const { storages: [storage] } = await open(name);
    const owner = await storage.users.create(newUser('owner'));
    const other = await storage.users.create(newUser('other'));
    const first = await storage.applications.create(newApplication(owner.id, 'App-One'));
    expect(first).toEqual({ id: expect.any(Number), ...newApplication(owner.id, 'App-One') });
    const publicClient = await storage.applications.create(newApplication(owner.id, 'app-two', false));
    expect(publicClient).toEqual({ id: expect.any(Number), ...newApplication(owner.id, 'app-two', false) });
    const theirs = await storage.applications.create(newApplication(other.id, 'app-three'));
    expect(await storage.applications.byId(first.id)).toEqual(first);
    expect(await storage.applications.byUid('App-One')).toEqual(first);
    expect(await storage.applications.byUid('app-one')).toBeUndefined();
    expect(await storage.applications.byId(Number.NaN)).toBeUndefined();
    expect(await storage.applications.ownedBy(owner.id)).toEqual([first, publicClient]);
    expect(await storage.applications.ownedBy(other.id)).toEqual([theirs]);
    expect(await storage.applications.ownedBy(other.id + 1)).toEqual([]);
    expect(await refusal(storage.applications.create(newApplication(other.id, 'App-One')))).toEqual({ field: 'uid', code: 'taken', message: 'the App ID "App-One" is already taken' });
    expect(await storage.applications.ownedBy(other.id)).toEqual([theirs]);
  });

  it('lets two applications have the same secret (it identifies nothing)', async () => {
    const { storages: [storage] } = await open(name);
    const owner = await storage.users.create(newUser('owner'));
    await storage.applications.create({ ...newApplication(owner.id, 'one'), secret_digest: 'same' });
    const second = await storage.applications.create({ ...newApplication(owner.id, 'two'), secret_digest: 'same' });
    expect(second.secret_digest).toBe('same');
  });

  it("deletes the owner's application with its codes, revokes its live tokens, and refuses anyone else", async () => {
    const { storages: [storage] } = await open(name);
    const owner = await storage.users.create(newUser('owner'));
    const user = await storage.users.create(newUser('user'));
    const doomed = await storage.applications.create(newApplication(owner.id, 'doomed'));
    const kept = await storage.applications.create(newApplication(owner.id, 'kept'));
    await storage.codes.create(newCode('doomed-code', doomed.id, user.id));
    await storage.codes.create(newCode('kept-code', kept.id, user.id));
    await storage.tokens.issue(newPair('live', doomed.id, user.id));
    await storage.tokens.issue(newPair('revoked-before', doomed.id, owner.id));
    await storage.tokens.revoke('revoked-before', now - 50);
    await storage.tokens.issue(newPair('of-kept', kept.id, user.id));

    expect(await storage.applications.deleteOwned(user.id, doomed.id, now)).toBe(false);
    expect(await storage.applications.deleteOwned(owner.id, kept.id + 100, now)).toBe(false);
    expect(await storage.applications.deleteOwned(owner.id, Number.NaN, now)).toBe(false);
    expect(await storage.applications.byId(doomed.id)).toEqual(doomed);
    expect((await storage.tokens.byAccessDigest('access-live'))?.revoked_at).toBeNull();

    expect(await storage.applications.deleteOwned(owner.id, doomed.id, now)).toBe(true);
    expect(await storage.applications.byId(doomed.id)).toBeUndefined();
    expect(await storage.applications.byUid('doomed')).toBeUndefined();
    expect(await storage.applications.ownedBy(owner.id)).toEqual([kept]);
    expect((await storage.tokens.byAccessDigest('access-live'))?.revoked_at).toBe(now);
    expect((await storage.tokens.byAccessDigest('access-revoked-before'))?.revoked_at).toBe(now - 50);
    expect((await storage.tokens.byAccessDigest('access-of-kept'))?.revoked_at).toBeNull();
    expect(await redeem(storage, 'doomed-code', doomed.id)).toBe('unknown');
    expect(await redeem(storage, 'kept-code', kept.id)).toBe('issued');
    expect(await storage.applications.deleteOwned(owner.id, doomed.id, now)).toBe(false);
  });
});
