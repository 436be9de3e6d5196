import { fileStorage } from '../../src/store/file/storage.js';
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { limits } from '../../src/config.js';
import { LoginThrottle } from '../../src/domain/login-throttle.js';
import { memoryThrottleBacking } from '../../src/store/file/throttle.js';
import { codeStep, passwordStep } from '../../src/domain/sign-in.js';
import { openStore, type Store } from '../../src/store/file/store.js';
import { loadSeed } from '../../src/domain/seed/load.js';
import { seed as accounts, exampleSeedPath } from '../support/server.js';
import { createUser } from '../../src/domain/accounts.js';
import { currentCode } from '../support/two-factor.js';

let store: Store;
const throttle = new LoginThrottle(limits.loginThrottle, memoryThrottleBacking());
const now = Math.floor(Date.now() / 1000);
beforeAll(async () => {
  store = await openStore({ file: null });
  await loadSeed(fileStorage(store), JSON.parse(await readFile(exampleSeedPath, 'utf8')));
  await createUser(fileStorage(store), { username: 'nosecret', email: 'nosecret@example.com', name: 'No Secret', password: 'a long enough password', two_factor_enabled: true });
});

describe('passwordStep', () => {
  it.each([
    ['jsmith', accounts.jsmith.password, 'signed-in'],
    ['awong', accounts.awong.password, 'code-needed'],
    ['nosecret', 'a long enough password', 'no-authenticator'],
    ['jsmith', 'not the password', 'wrong-credentials'],
    ['nobody', 'whatever it is', 'wrong-credentials'],
  ])('%s with %s: %s', async (login, password, outcome) => {
    expect((await passwordStep(throttle, fileStorage(store), login, password, '127.0.0.1')).outcome).toBe(outcome);
  });
});

describe('codeStep', () => {
  const awong = () => store.lookup('users', 'username', 'awong')!.id;
  it('needs a pending password step that has not run out', async () => {
    expect(await codeStep(throttle, fileStorage(store), undefined, '123456', now, '127.0.0.1')).toEqual({ outcome: 'not-started' });
    expect(await codeStep(throttle, fileStorage(store), { userId: awong(), until: now }, currentCode(accounts.awong.otp_secret, now), now, '127.0.0.1')).toEqual({ outcome: 'not-started' });
  });

  it('signs in with the right code, once', async () => {
    const pending = { userId: awong(), until: now + 300 };
    const code = currentCode(accounts.awong.otp_secret, now);
    expect(await codeStep(throttle, fileStorage(store), pending, ` ${code} `, now, '127.0.0.1')).toEqual({ outcome: 'signed-in', userId: awong() });
    expect(await codeStep(throttle, fileStorage(store), pending, code, now, '127.0.0.1')).toEqual({ outcome: 'wrong-code' });
  });
});
