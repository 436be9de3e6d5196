// The signing-key port (domain/storage/signing-keys.ts) on every backend (backends.ts): the first key, added once
// however many ask at once; rotation, which retires the newest key as the new one begins to sign (ahead of the clock),
// drops keys retired by the cutoff, and leaves one newest key however many rotate at once; the keys kept across a restart and, on the file store, across a
// restore of a snapshot (a test kit's reset). On PostgreSQL the races run between several pools, as between instances;
// a data file written before the collection existed is store/file/store.test.ts's.
import { describe, expect, it } from 'vitest';
import type { NewSigningKey, Storage } from '../../src/domain/storage/index.js';
import { day, everyBackend, fileStores, inMemory, newUser, now, onDisk, useBackends } from './backends.js';

const { open, postgres } = useBackends();

/** A key as the store sees it: the store neither parses nor checks the PEM, so a stand-in will do. */
const key = (name: string, createdAt = now, signsFrom = createdAt): NewSigningKey => ({
  kid: `kid-${name}`,
  private_key: `-----BEGIN PRIVATE KEY-----\nprivate-${name}\n-----END PRIVATE KEY-----\n`,
  public_jwk: { kty: 'RSA', n: `modulus-${name}`, e: 'AQAB' },
  created_at: createdAt,
  signs_from: signsFrom,
});
const signing = (name: string, createdAt = now, signsFrom = createdAt) => ({ ...key(name, createdAt, signsFrom), retired_at: null });
const retired = (name: string, at: number, createdAt = now, signsFrom = createdAt) => ({ ...key(name, createdAt, signsFrom), retired_at: at });

const kids = async (storage: Storage) => (await storage.signingKeys.kept()).map((k) => k.kid);
const newest = async (storage: Storage) => (await storage.signingKeys.kept()).filter((k) => k.retired_at === null);

describe.each(everyBackend)('signing keys on %s', (name) => {
  it('has none at first, then keeps the first key added, and answers it to a later attempt instead of adding another', async () => {
    const { storages, reopen } = await open(name);
    const [storage] = storages;
    expect(await storage.signingKeys.kept()).toEqual([]);

    expect(await storage.signingKeys.addFirst(key('first'))).toEqual(signing('first'));
    expect(await storage.signingKeys.addFirst(key('second'))).toEqual(signing('first'));
    for (const instance of storages) expect(await instance.signingKeys.kept()).toEqual([signing('first')]);
    const reopened = await reopen();
    expect(await reopened.signingKeys.kept()).toEqual([signing('first')]);
  });

  it('adds one first key of many added at once, and answers every caller that one', async () => {
    const { storages } = await open(name);
    const attempts = Array.from({ length: 8 }, (_, i) => storages[i % storages.length]!.signingKeys.addFirst(key(`racer-${i}`)));
    const answers = await Promise.all(attempts);
    const [winner] = answers;
    expect(answers.every((answer) => answer.kid === winner!.kid)).toBe(true);
    expect(await storages[0].signingKeys.kept()).toEqual([winner]);
  });

  it('rotates: the newest key retires as the new one begins, and keys retired by the cutoff are dropped', async () => {
    const { storages, reopen } = await open(name);
    const [storage] = storages;
    expect(await storage.signingKeys.rotate(key('a', now - 3 * day), now - 4 * day)).toEqual({ retiredKid: null, droppedKids: [] });
    expect(await storage.signingKeys.kept()).toEqual([signing('a', now - 3 * day)]);

    expect(await storage.signingKeys.rotate(key('b', now - 2 * day), now - 3 * day)).toEqual({ retiredKid: 'kid-a', droppedKids: [] });
    expect(await storage.signingKeys.rotate(key('c', now - 1000), now - 1000 - day)).toEqual({ retiredKid: 'kid-b', droppedKids: ['kid-a'] });
    // a was retired before the last cutoff and is gone; b was retired after it and stays, behind the newest key.
    expect(await storage.signingKeys.kept()).toEqual([signing('c', now - 1000), retired('b', now - 1000, now - 2 * day)]);

    // A key that begins ahead of the clock: the one before it is retired then, not now.
    expect(await storage.signingKeys.rotate(key('d', now, now + 600), now - day)).toEqual({ retiredKid: 'kid-c', droppedKids: [] });
    const expected = [signing('d', now, now + 600), retired('c', now + 600, now - 1000), retired('b', now - 1000, now - 2 * day)];
    for (const instance of storages) expect(await instance.signingKeys.kept()).toEqual(expected);
    const reopened = await reopen();
    expect(await reopened.signingKeys.kept()).toEqual(expected);
    // A key already there is not added again: the first key is for a store without one.
    expect(await reopened.signingKeys.addFirst(key('late'))).toEqual(signing('d', now, now + 600));
    expect(await kids(reopened)).toEqual(['kid-d', 'kid-c', 'kid-b']);
  });

  it('hands over from the pending key when rotated again before it begins, and drops every key retired by a cutoff of now', async () => {
    const { storages: [storage] } = await open(name);
    await storage.signingKeys.addFirst(key('first', now - day));
    await storage.signingKeys.rotate(key('next', now, now + 600), now - day);
    // Rotated again 100 s on: the first key still hands over at now + 600, the pending one at now + 700.
    expect(await storage.signingKeys.rotate(key('again', now + 100, now + 700), now + 100 - day)).toEqual({ retiredKid: 'kid-next', droppedKids: [] });
    expect(await storage.signingKeys.kept()).toEqual([signing('again', now + 100, now + 700), retired('next', now + 700, now, now + 600), retired('first', now + 600, now - day)]);
    // A key that signs at once, with the cutoff at its start: every other key retires then and is dropped.
    const dropped = await storage.signingKeys.rotate(key('clean', now + 200), now + 200);
    expect({ ...dropped, droppedKids: [...dropped.droppedKids].sort() }).toEqual({ retiredKid: 'kid-again', droppedKids: ['kid-again', 'kid-first', 'kid-next'] });
    expect(await storage.signingKeys.kept()).toEqual([signing('clean', now + 200)]);
  });

  it('leaves one signing key after rotations made at once, each retiring the key the one before it made', async () => {
    const { storages } = await open(name);
    const [storage] = storages;
    await storage.signingKeys.addFirst(key('first'));
    const rotations = Array.from({ length: 8 }, (_, i) => storages[i % storages.length]!.signingKeys.rotate(key(`rotation-${i}`), now - day));
    const answers = await Promise.all(rotations);
    const kept = await storage.signingKeys.kept();
    expect(await newest(storage)).toHaveLength(1);
    expect(kept).toHaveLength(9);
    // A chain: every key was retired once, by the rotation after the one that made it, and the last one made signs.
    const retiredKids = answers.map((a) => a.retiredKid);
    expect(new Set(retiredKids).size).toBe(8);
    const madeKids = answers.map((_, i) => `kid-rotation-${i}`);
    const [last] = await newest(storage);
    expect([...retiredKids, last!.kid].sort()).toEqual(['kid-first', ...madeKids].sort());
  });
});

describe.each(fileStores)('signing keys on %s, across a restore', (name) => {
  it("keeps the keys through a restore of a snapshot, as the instance's secrets: a test kit's reset changes no key", async () => {
    const { storages: [storage], data } = await open(name);
    await storage.signingKeys.addFirst(key('before'));
    const snapshot = (await storage.maintenance.snapshot())!;
    await storage.users.create(newUser('later'));
    await storage.signingKeys.rotate(key('after'), now - day);
    const keysBefore = structuredClone(data!().signing_keys);

    await storage.maintenance.restore(snapshot);
    expect(await storage.users.byUsername('later')).toBeUndefined();
    expect(await storage.signingKeys.kept()).toEqual([signing('after'), retired('before', now)]);
    expect(data!().signing_keys).toEqual(keysBefore);
    // The indexes were rebuilt with them: rotation goes on from the keys kept.
    await storage.signingKeys.rotate(key('again', now + 1), now - day);
    expect(await kids(storage)).toEqual(['kid-again', 'kid-after', 'kid-before']);
  });

  it('keeps its own keys when restoring a snapshot taken on another store', async () => {
    const { storages: [storage] } = await open(name);
    const { storages: [elsewhere] } = await open(inMemory);
    await storage.signingKeys.addFirst(key('mine'));
    await elsewhere.signingKeys.addFirst(key('theirs'));
    await storage.maintenance.restore((await elsewhere.maintenance.snapshot())!);
    expect(await storage.signingKeys.kept()).toEqual([signing('mine')]);
  });
});

describe('signing keys on the file store on disk', () => {
  it('makes each change durable in the journal before answering, and keeps the keys a restore left in the file', async () => {
    const { storages: [storage], durableData } = await open(onDisk);
    await storage.signingKeys.addFirst(key('first'));
    expect((await durableData!()).signing_keys).toEqual([signing('first')]);
    await storage.signingKeys.rotate(key('second'), now - day);
    expect((await durableData!()).signing_keys).toEqual([retired('first', now), signing('second')]);
    // A restore rewrites the whole file: the keys are in it.
    await storage.maintenance.restore((await storage.maintenance.snapshot())!);
    expect((await durableData!()).signing_keys).toEqual([retired('first', now), signing('second')]);
  });
});

describe('signing keys on PostgreSQL', () => {
  it('adds one first key, and leaves one signing key, when many instances race on one database', async () => {
    const { pools, storages } = await postgres(6);
    const first = await Promise.all(storages.map((storage, i) => storage.signingKeys.addFirst(key(`instance-${i}`))));
    expect(new Set(first.map((k) => k.kid)).size).toBe(1);
    const { rows: afterFirst } = await pools[0]!.query<{ kid: string }>('SELECT kid FROM signing_keys');
    expect(afterFirst).toEqual([{ kid: first[0]!.kid }]);

    // Three rounds, each every instance rotating at once.
    for (let round = 0; round < 3; round++) {
      await Promise.all(storages.map((storage, i) => storage.signingKeys.rotate(key(`round-${round}-${i}`, now + round), now - day)));
    }
    const { rows } = await pools[0]!.query<{ signing: string }>('SELECT count(*) FILTER (WHERE retired_at IS NULL) AS signing, count(*) AS total FROM signing_keys');
    expect(rows[0]).toEqual({ signing: '1', total: String(1 + 3 * storages.length) });
    const [newestKey] = await newest(storages[0]!);
    for (const storage of storages) expect(await newest(storage)).toEqual([newestKey]);
  });

  it('refuses a second newest key whoever writes it, even past the store', async () => {
    const { pools, storages } = await postgres(1);
    await storages[0]!.signingKeys.addFirst(key('first'));
    const insert = pools[0]!.query('INSERT INTO signing_keys (kid, private_key, public_jwk, created_at, signs_from) VALUES ($1, $2, $3, now(), now())', ['kid-stray', 'pem', { kty: 'RSA', n: 'n', e: 'AQAB' }]);
    await expect(insert).rejects.toMatchObject({ code: '23505', constraint: 'signing_keys_signing' });
    expect(await kids(storages[0]!)).toEqual(['kid-first']);
  });
});
