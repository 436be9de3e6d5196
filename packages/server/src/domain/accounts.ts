// User accounts and personal access tokens. Validation happens before `store.commit`, and the checks that depend
// on the store are repeated inside it (hashing a password awaits, so another request may have taken the name).
import { InputError } from '../explained-error.js';
import { checkScopes } from './oauth/scopes.js';
import type { Store } from '../store/file-store.js';
import type { PersonalAccessTokenRecord, Scope, UserRecord } from '../store/schema.js';
import { hashPassword, verifyPassword, verifyPasswordAgainstNothing } from './passwords.js';
import { digest, newSecret } from './secrets.js';
import { checkOtpSecret } from './two-factor.js';
import { activeUser, isActive } from './users.js';


export const usernamePattern = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$/;
// Deliberately loose: one @, no spaces, a dot in the domain. Whether the address works only a message can tell.
const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/;

export interface NewUser {
  username: string;
  email: string;
  name: string;
  password: string;
  two_factor_enabled?: boolean;
  /** The base32 TOTP secret of a user with `two_factor_enabled` (see two-factor.ts). */
  otp_secret?: string;
  is_admin?: boolean;
  bio?: string;
}

export interface NewPersonalAccessToken {
  name: string;
  /** Defaults to `['api']`. */
  scopes?: readonly Scope[];
  /** Last day of validity, YYYY-MM-DD; null or absent for no expiry. */
  expires_at?: string | null;
  /** Only for seeds: a fixed token instead of a random one. */
  token?: string;
}

export interface CheckedPersonalAccessToken {
  name: string;
  scopes: Scope[];
  expires_at: string | null;
  token?: string;
}

/** Checks the fields of a new user that do not depend on the store; throws InputError. */
export function checkNewUserFields(input: Omit<NewUser, 'password'>): void {
  if (typeof input.username !== 'string' || !usernamePattern.test(input.username)) {
    throw new InputError(
      'username',
      'must be 1 to 255 letters, digits, "_", "." or "-", and must not start with "." or "-"',
    );
  }
  if (typeof input.email !== 'string' || input.email.length > 254 || !emailPattern.test(input.email)) {
    throw new InputError('email', `${JSON.stringify(input.email)} is not an e-mail address`);
  }
  checkText('name', input.name, 255);
  if (input.bio !== undefined && (typeof input.bio !== 'string' || input.bio.length > 255)) {
    throw new InputError('bio', 'must be a string of at most 255 characters');
  }
  for (const flag of ['two_factor_enabled', 'is_admin'] as const) {
    if (input[flag] !== undefined && typeof input[flag] !== 'boolean') throw new InputError(flag, 'must be true or false');
  }
  if (input.otp_secret !== undefined) {
    if (input.two_factor_enabled !== true) throw new InputError('otp_secret', 'needs two_factor_enabled: true');
    checkOtpSecret(input.otp_secret);
  }
}

/** Throws an InputError (`taken`) if the username or e-mail address is taken (whatever the case) in the store. */
export function checkUserIsNew(store: Store, input: Pick<NewUser, 'username' | 'email'>): void {
  if (store.lookup('users', 'username', input.username)) {
    throw new InputError('username', `the username ${JSON.stringify(input.username)} is already taken`, 'taken');
  }
  // A project's namespace is a group path or a username, so the two must never be the same name.
  if (store.lookup('groups', 'path', input.username)) {
    throw new InputError('username', `the username ${JSON.stringify(input.username)} is already a group's path`, 'taken');
  }
  if (store.lookup('users', 'email', input.email)) {
    throw new InputError('email', `the e-mail address ${JSON.stringify(input.email)} is already in use`, 'taken');
  }
}

/** Adds a user whose password is already hashed; call inside `store.commit`. Throws, changing nothing, if taken. */
export function insertUser(store: Store, input: Omit<NewUser, 'password'>, passwordHash: string): UserRecord {
  checkUserIsNew(store, input);
  return store.insert('users', {
    id: store.nextId('users'),
    username: input.username,
    email: input.email,
    name: input.name.trim(),
    passwordHash,
    two_factor_enabled: input.two_factor_enabled ?? false,
    otpSecret: input.otp_secret ?? null,
    otpLastStep: null,
    state: 'active',
    is_admin: input.is_admin ?? false,
    bio: input.bio ?? '',
    created_at: new Date().toISOString(),
  });
}

/** Checks the fields and that the names are free, hashes the password, and adds the user in one commit. */
export async function createUser(store: Store, input: NewUser): Promise<UserRecord> {
  checkNewUserFields(input);
  checkUserIsNew(store, input);
  const passwordHash = await hashPassword(input.password);
  return store.commit(() => insertUser(store, input, passwordHash));
}

/** Sets a new password for the user with this login (the admin CLI's reset); the old one stops working at once. */
export async function resetPassword(store: Store, login: string, password: string): Promise<UserRecord> {
  const user = findUserByLogin(store, login);
  if (!user) throw new InputError('username', `there is no user ${JSON.stringify(login)}`, 'unknown');
  const passwordHash = await hashPassword(password);
  return store.commit(() => store.update('users', user, { passwordHash }));
}

/** The user whose username or e-mail address (whatever the case) is `login`. */
export function findUserByLogin(store: Store, login: string): UserRecord | null {
  return store.lookup('users', 'username', login) ?? store.lookup('users', 'email', login) ?? null;
}

/**
 * The active user with this login and password, or null. Unknown user, wrong password and blocked account get the
 * same answer after the same work, so neither the answer nor its timing tells which.
 */
export async function authenticate(store: Store, login: string, password: string): Promise<UserRecord | null> {
  const user = findUserByLogin(store, login);
  if (!user) return verifyPasswordAgainstNothing(password).then(() => null);
  const ok = await verifyPassword(password, user.passwordHash);
  return ok && isActive(user) ? user : null;
}

/** Checks a token's fields (not the store); answers them with defaults filled in; throws InputError. */
export function checkPersonalAccessTokenFields(input: NewPersonalAccessToken): CheckedPersonalAccessToken {
  checkText('name', input.name, 255);
  const scopes = checkScopes(input.scopes ?? ['api']);
  const expires = input.expires_at ?? null;
  if (expires !== null && (typeof expires !== 'string' || !isCalendarDate(expires))) {
    throw new InputError('expires_at', `${JSON.stringify(expires)} is not a date (YYYY-MM-DD)`);
  }
  if (input.token !== undefined && (typeof input.token !== 'string' || !/^[\x21-\x7e]{20,255}$/.test(input.token))) {
    throw new InputError('token', 'must be 20 to 255 printable ASCII characters without spaces');
  }
  return { name: input.name.trim(), scopes, expires_at: expires, ...(input.token === undefined ? {} : { token: input.token }) };
}

/** Adds a personal access token for a checked input; call inside `store.commit`. */
export function insertPersonalAccessToken(
  store: Store,
  userId: number,
  input: CheckedPersonalAccessToken,
  token: string,
): PersonalAccessTokenRecord {
  const tokenDigest = digest(token);
  if (store.lookup('personalAccessTokens', 'tokenDigest', tokenDigest)) {
    throw new InputError('token', 'this token is already in use', 'taken');
  }
  return store.insert('personalAccessTokens', {
    id: store.nextId('personalAccessTokens'),
    user_id: userId,
    name: input.name,
    tokenDigest,
    scopes: [...input.scopes],
    created_at: new Date().toISOString(),
    expires_at: input.expires_at,
    revoked: false,
  });
}

/** Creates a token; the plain token is answered once here and stored only as a digest. */
export async function createPersonalAccessToken(
  store: Store,
  userId: number,
  input: NewPersonalAccessToken,
): Promise<{ record: PersonalAccessTokenRecord; token: string }> {
  const checked = checkPersonalAccessTokenFields(input);
  if (!store.lookup('users', 'id', userId)) throw new InputError('user_id', `there is no user ${userId}`, 'unknown');
  const token = checked.token ?? newSecret('personalAccessToken');
  const record = await store.commit(() => insertPersonalAccessToken(store, userId, checked, token));
  return { record, token };
}

/**
 * The token's record if it may be used at `now`: not revoked, not past the end (UTC) of its last day, and its
 * user exists and is not blocked.
 */
export function findActivePersonalAccessToken(
  store: Store,
  token: string,
  now: Date = new Date(),
): PersonalAccessTokenRecord | null {
  const record = store.lookup('personalAccessTokens', 'tokenDigest', digest(token));
  if (!record || record.revoked) return null;
  if (record.expires_at !== null && now.getTime() >= endOfDayUtc(record.expires_at)) return null;
  return activeUser(store, record.user_id) ? record : null;
}

/** The user's tokens, newest first. */
export function listPersonalAccessTokens(store: Store, userId: number): PersonalAccessTokenRecord[] {
  return store.data.personalAccessTokens.filter((t) => t.user_id === userId).reverse();
}

/** Revokes one of the user's tokens; null when the user has no such token (another user's token included). */
export async function revokePersonalAccessToken(
  store: Store,
  userId: number,
  id: number,
): Promise<PersonalAccessTokenRecord | null> {
  const record = store.lookup('personalAccessTokens', 'id', id);
  if (!record || record.user_id !== userId) return null;
  if (record.revoked) return record;
  return store.commit(() => store.update('personalAccessTokens', record, { revoked: true }));
}

function checkText(field: string, value: unknown, max: number): void {
  if (typeof value !== 'string' || value.trim() === '') throw new InputError(field, 'must not be blank');
  if (value.length > max) throw new InputError(field, `must be at most ${max} characters long`);
}

function isCalendarDate(text: string): boolean {
  const match = datePattern.exec(text);
  if (!match) return false;
  const [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

function endOfDayUtc(day: string): number {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return Date.UTC(y, m - 1, d + 1);
}
