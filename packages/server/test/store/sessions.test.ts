// One contract for session storage, run against each implementation: the file store in memory, the file store on
// disk (read back after a restart), and PostgreSQL (migrated, in the run's throwaway cluster).
import { describe, expect, it } from 'vitest';
import { digest } from '../../src/domain/secrets.js';
import { everyBackend, useBackends } from './backends.js';

const { open } = useBackends();

/** Milliseconds, as the session store counts them. */
const now = Date.UTC(2026, 10, 25, 12, 0, 0);
const sid = 'Xb7kq2V9mTn4RzL8wPcJ3sYd-a-raw-session-id';
const key = digest(sid);
const session = { cookie: { originalMaxAge: 28_800_000, httpOnly: true, path: '/' }, userId: 7, signedInAt: 1_795_000_000 };

describe.each(everyBackend)('session storage on %s', (name) => {
  const subject = async () => {
    const { storages, dump, reopen } = await open(name);
    return { storage: storages[0].sessions, dump, reopen: async () => (await reopen()).sessions };
  };

  it('finds what was saved, until it expires, and keeps no raw session id', async () => {
    const { storage, dump, reopen } = await subject();
    await storage.save(key, session, now + 1000);
    expect(await storage.find(key, now)).toEqual(session);
    expect(await (await reopen()).find(key, now + 999)).toEqual(session);
    expect(await (await reopen()).find(key, now + 1000)).toBeNull();
    expect(await storage.find(digest('another id'), now)).toBeNull();
    expect(await dump()).not.toContain(sid);
  });

  it('ends every session of one user, signed in or halfway through a two-factor sign-in, and no one else\'s', async () => {
    const { storage, reopen } = await subject();
    const keys = ['a', 'b', 'half', 'other', 'anonymous'].map((k) => digest(`session ${k}`));
    await storage.save(keys[0]!, session, now + 1000);
    await storage.save(keys[1]!, { ...session, signedInAt: 1_795_000_100 }, now + 1000);
    await storage.save(keys[2]!, { cookie: session.cookie, twoFactor: { userId: 7, until: 1_795_000_300 } }, now + 1000);
    await storage.save(keys[3]!, { ...session, userId: 70 }, now + 1000);
    await storage.save(keys[4]!, { cookie: session.cookie }, now + 1000);
    expect(await storage.endAllOf(7)).toBe(3);
    const left = await reopen();
    expect(await Promise.all(keys.map(async (k) => (await left.find(k, now)) !== null))).toEqual([false, false, false, true, true]);
    expect(await left.endAllOf(7)).toBe(0);
  });

  it('replaces a session on save, and refreshes only the cookie and the expiry of an existing one', async () => {
    const { storage } = await subject();
    await storage.save(key, session, now + 1000);
    await storage.save(key, { ...session, userId: 8 }, now + 1000);
    await storage.refresh(key, { originalMaxAge: 1, httpOnly: true, path: '/' }, now + 5000);
    expect(await storage.find(key, now + 4000)).toEqual({ ...session, userId: 8, cookie: { originalMaxAge: 1, httpOnly: true, path: '/' } });
    await storage.refresh(digest('never saved'), { originalMaxAge: 1 }, now + 5000);
    expect(await storage.find(digest('never saved'), now)).toBeNull();
  });

  it('forgets a removed session, and removing an unknown one is harmless', async () => {
    const { storage } = await subject();
    await storage.save(key, session, now + 1000);
    await storage.remove(key);
    await storage.remove(key);
    expect(await storage.find(key, now)).toBeNull();
  });

  it('ends with one of the concurrent saves whole, never a mixture', async () => {
    const { storage } = await subject();
    await Promise.all(Array.from({ length: 20 }, (_, i) => storage.save(key, { ...session, userId: i, marker: `m${i}` }, now + 1000)));
    const found = (await storage.find(key, now)) as { userId: number; marker: string };
    expect(found.marker).toBe(`m${found.userId}`);
  });
});
