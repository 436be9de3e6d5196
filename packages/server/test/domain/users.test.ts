// The one rule for whether an account may act (users.ts), which every sign-in, token and recipient check asks.
import { describe, expect, it } from 'vitest';
import { activeUser, isActive } from '../../src/domain/users.js';
import { activeAndBlocked } from './fixtures.js';

const { storage, jane, blocked } = activeAndBlocked();
const users = storage.users;

describe('isActive', () => {
  it('holds for an active user only: not for a blocked one, nor for none', () => {
    expect(isActive(jane)).toBe(true);
    expect(isActive(blocked)).toBe(false);
    expect(isActive(undefined)).toBe(false);
    expect(isActive(null)).toBe(false);
  });
});

describe('activeUser', () => {
  it('answers the stored user while they may act, undefined when blocked or unknown', async () => {
    expect(await activeUser(users, jane.id)).toEqual(jane);
    expect(await activeUser(users, blocked.id)).toBeUndefined();
    expect(await activeUser(users, 999)).toBeUndefined();
  });
});
