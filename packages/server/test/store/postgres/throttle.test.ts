// The sign-in throttle on each backing (memory, PostgreSQL): the same policy whichever keeps the counts, and on
// PostgreSQL the counts and the known addresses are shared by every throttle on the database, as by every instance.
import { fileStorage } from '../../../src/store/file/storage.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LoginThrottle, LoginThrottledError, type LoginThrottlePolicy } from '../../../src/domain/login-throttle.js';
import { memoryThrottleBacking } from '../../../src/store/file/throttle.js';
import { type Counts, type ThrottleBacking } from '../../../src/domain/storage/index.js';
import { openStore, type Store } from '../../../src/store/file/store.js';
import { postgresThrottleBacking } from '../../../src/store/postgres/throttle.js';
import { loadSeed } from '../../../src/domain/seed/load.js';
import { migratedDatabase } from '../../../../../test/support/postgres.js';

const policy: LoginThrottlePolicy = { perAddress: { failures: 100, windowSeconds: 600 }, perLogin: { failures: 3, windowSeconds: 600 }, deviceStartsPerAddress: { requests: 60, windowSeconds: 60 }, knownAddressSeconds: 3600 };
const password = 'correct-horse-battery';

let store: Store;
let pool: pg.Pool;
let close: (() => Promise<void>) | undefined;

beforeAll(async () => {
  // The users still live in the file store (the domain moves to PostgreSQL in a later step); the database gets the
  // same ids so that its sign_in_addresses rows have their users.
  store = await openStore({ file: null });
  await loadSeed(fileStorage(store), {
    users: ['jsmith', 'awong', 'bwong', 'cwong', 'dwong', 'ewong'].map((username) => ({ username, email: `${username}@example.com`, name: username, password })),
  });
  const database = await migratedDatabase(inject('postgresUrl'));
  [pool] = database.pools as [pg.Pool];
  close = database.close;
  for (const user of store.data.users) {
    await pool.query(`INSERT INTO users (id, username, email, name, password_hash) VALUES ($1, $2, $3, $4, 'x')`, [user.id, user.username, user.email, user.name]);
  }
});

afterAll(async () => {
  await close?.();
  await store?.close();
});

const signIn = (throttle: LoginThrottle, login: string, secret: string, address: string) =>
  throttle.authenticate(fileStorage(store), login, secret, address, { secondFactorCanFollow: true }).then(
    (user) => (user ? 'signed in' : 'wrong'),
    (error: unknown) => {
      if (error instanceof LoginThrottledError) return 'throttled';
      throw error;
    },
  );

const backings: Record<string, () => ThrottleBacking> = {
  memory: () => memoryThrottleBacking(),
  PostgreSQL: () => postgresThrottleBacking(pool),
};

/** A backing whose limiters the test can read, by key prefix ('address', 'login'). */
function readable(backing: ThrottleBacking): { backing: ThrottleBacking; counts: Record<string, Counts> } {
  const counts: Record<string, Counts> = {};
  return { backing: { ...backing, limiter: (options) => (counts[options.keyPrefix] = backing.limiter(options)) }, counts };
}
const countOf = async (limiter: Counts, key: string) => (await limiter.get(key))?.consumedPoints ?? 0;

describe.each(Object.keys(backings))('the throttle on %s', (name) => {
  const login = name === 'memory' ? 'awong' : 'bwong';

  it('refuses a login after its failures, whatever the address, and not another login', async () => {
    const throttle = new LoginThrottle(policy, backings[name]!());
    const seen = [];
    for (let i = 0; i < 4; i++) seen.push(await signIn(throttle, login, 'wrong', `10.0.0.${i}`));
    expect(seen).toEqual(['wrong', 'wrong', 'wrong', 'throttled']);
    expect(await signIn(throttle, `${login}@example.com`, password, '10.0.1.1')).toBe('signed in');
  });

  it('lets the user in from an address they signed in from while the login is exhausted elsewhere', async () => {
    const throttle = new LoginThrottle(policy, backings[name]!());
    const user = name === 'memory' ? 'jsmith' : 'cwong';
    expect(await signIn(throttle, user, password, '192.0.2.7')).toBe('signed in');
    for (let i = 0; i < 3; i++) await signIn(throttle, user, 'wrong', '198.51.100.1');
    expect(await signIn(throttle, user, password, '198.51.100.2')).toBe('throttled');
    expect(await signIn(throttle, user, password, '192.0.2.7')).toBe('signed in');
  });

  it('checks exactly as many of a burst of wrong passwords as the limit, and counts the refusals nothing', async () => {
    const { backing, counts } = readable(backings[name]!());
    const throttle = new LoginThrottle(policy, backing);
    const burst = `burst-${name.toLowerCase()}`;
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => signIn(throttle, burst, 'wrong', `10.1.0.${i}`)));
    expect(answers.filter((a) => a === 'wrong')).toHaveLength(policy.perLogin.failures);
    expect(answers.filter((a) => a === 'throttled')).toHaveLength(20 - policy.perLogin.failures);
    await Promise.all(Array.from({ length: 20 }, (_, i) => signIn(throttle, burst, 'wrong', `10.1.1.${i}`)));
    expect(await countOf(counts.login!, `login:${burst}`)).toBe(policy.perLogin.failures);
    // Every address gave back the point of an attempt refused by the login's count.
    expect(await countOf(counts.address!, '10.1.1.0')).toBe(0);
  });

  it('lets any number of right passwords in at once, waiting for room rather than refusing, and counts none', async () => {
    const { backing, counts } = readable(backings[name]!());
    const oneAddress = { ...policy, perAddress: { failures: 3, windowSeconds: 600 }, perLogin: { failures: 100, windowSeconds: 600 } };
    const throttle = new LoginThrottle(oneAddress, backing);
    const user = name === 'memory' ? 'dwong' : 'ewong';
    const from = '10.2.0.1';
    for (let i = 0; i < 2; i++) expect(await signIn(throttle, `nobody-${name}-${i}`, 'wrong', from)).toBe('wrong');
    // One point left: thirty right passwords take turns with it.
    expect(await Promise.all(Array.from({ length: 30 }, () => signIn(throttle, user, password, from)))).toEqual(Array(30).fill('signed in'));
    expect(await countOf(counts.address!, from)).toBe(2);
    expect(await signIn(throttle, `nobody-${name}-2`, 'wrong', from)).toBe('wrong');
    // Only failures fill the count, and then nothing gets in; the refusals leave it as it was.
    expect(await Promise.all(Array.from({ length: 10 }, () => signIn(throttle, user, password, from)))).toEqual(Array(10).fill('throttled'));
    expect(await countOf(counts.address!, from)).toBe(3);
  });

  it("lets right passwords from new addresses wait for a login's last point rather than be refused", async () => {
    const { backing, counts } = readable(backings[name]!());
    const throttle = new LoginThrottle(policy, backing);
    const login = name === 'memory' ? 'dwong@example.com' : 'ewong@example.com';
    for (let i = 0; i < policy.perLogin.failures - 1; i++) expect(await signIn(throttle, login, 'wrong', `10.3.0.${i}`)).toBe('wrong');
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => signIn(throttle, login, password, `10.3.1.${i}`)));
    expect(answers).toEqual(Array(30).fill('signed in'));
    // A success clears the login's count.
    expect(await countOf(counts.login!, `login:${login}`)).toBe(0);
  });
});

describe('the throttle on PostgreSQL, several instances', () => {
  it('counts failures spread over instances against one limit, and shares the known addresses', async () => {
    const [one, two] = [new LoginThrottle(policy, postgresThrottleBacking(pool)), new LoginThrottle(policy, postgresThrottleBacking(pool))];
    const seen = [await signIn(one, 'jsmith', 'wrong', '203.0.113.1'), await signIn(two, 'jsmith', 'wrong', '203.0.113.2'), await signIn(one, 'jsmith', 'wrong', '203.0.113.3')];
    seen.push(await signIn(two, 'jsmith', password, '203.0.113.4'));
    expect(seen).toEqual(['wrong', 'wrong', 'wrong', 'throttled']);
    // An address one instance remembers is known to another.
    const awong = store.lookup('users', 'username', 'awong')!;
    await postgresThrottleBacking(pool).addresses.remember(awong.id, '192.0.2.99', Date.now());
    expect(await postgresThrottleBacking(pool).addresses.wasUsedSince(awong.id, '192.0.2.99', Date.now() - 1000)).toBe(true);
    expect(await postgresThrottleBacking(pool).addresses.wasUsedSince(awong.id, '192.0.2.98', Date.now() - 1000)).toBe(false);
  });

  it('keeps the sixteen most recent addresses of an account', async () => {
    const { addresses } = postgresThrottleBacking(pool);
    const user = store.lookup('users', 'username', 'awong')!.id;
    await pool.query('DELETE FROM sign_in_addresses WHERE user_id = $1', [user]);
    const start = Date.now() - 60_000;
    for (let i = 0; i < 20; i++) await addresses.remember(user, `198.18.0.${i}`, start + i * 1000);
    const { rows } = await pool.query<{ address: string }>('SELECT address FROM sign_in_addresses WHERE user_id = $1 ORDER BY seen_at', [user]);
    expect(rows.map((r) => r.address)).toEqual(Array.from({ length: 16 }, (_, i) => `198.18.0.${i + 4}`));
  });
});
