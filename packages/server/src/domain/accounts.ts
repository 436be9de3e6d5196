// User accounts and personal access tokens. Fields are checked here; names that must be unique are refused by the
// store when it adds the record (hashing a password awaits, so another request may have taken the name meanwhile).
import type { components } from '@tokenbell/sdk';
import { InputError } from '../explained-error.js';
import { checkScopes } from './oauth/scopes.js';
import { administratorScopes, apiScopes } from '../openapi/document.js';
import type { Account, NewUserRow, Storage } from './storage/index.js';
import type { ApiScope, EpochSeconds, PersonalAccessTokenRecord, Scope, UserRecord } from './storage/records.js';
import { hashPassword, needsRehash, rehashPassword, verifyPassword, verifyPasswordAgainstNothing } from './passwords.js';
import { digest, newSecret } from './secrets.js';
import { checkOtpSecret, newOtpSecret, provisioningUri } from './two-factor.js';
import { isActive } from './users.js';
import { epochSeconds } from './time.js';

export const usernamePattern = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$/;
// Deliberately loose: one @, no spaces, a dot in the domain. Whether the address works only a message can tell.
const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A new user's fields, as a seed fixture and the test kit's createTestUser take them (the document's TestUserRequest). */
export type NewUser = components['schemas']['TestUserRequest'];

export interface NewPersonalAccessToken {
  name: string;
  /** Defaults to `['api']`; only the API's scopes are accepted (checked). */
  scopes?: readonly Scope[];
  /** Last day of validity, YYYY-MM-DD; null or absent for no expiry. */
  expires_at?: string | null;
  /** Only for seeds: a fixed token instead of a random one. */
  token?: string;
}

export interface CheckedPersonalAccessToken {
  name: string;
  scopes: ApiScope[];
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
  checkEmail('email', input.email);
  checkSecondaryEmails(input.email, input.secondary_emails);
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

/** The stored form of a new user whose password is already hashed. */
export function newUserRow(input: Omit<NewUser, 'password'>, passwordHash: string): NewUserRow {
  return {
    username: input.username,
    email: input.email,
    secondary_emails: [...(input.secondary_emails ?? [])],
    name: input.name.trim(),
    password_hash: passwordHash,
    two_factor_enabled: input.two_factor_enabled ?? false,
    otp_secret: input.otp_secret ?? null,
    otp_last_step: null,
    state: 'active',
    is_admin: input.is_admin ?? false,
    bio: input.bio ?? '',
    created_at: epochSeconds(),
  };
}

/** Checks the fields, hashes the password, and adds the user; a taken name throws InputError (`taken`). */
export async function createUser(storage: Storage, input: NewUser): Promise<UserRecord> {
  checkNewUserFields(input);
  return storage.users.create(newUserRow(input, await hashPassword(input.password)));
}

/** The user with this login (username, or else e-mail address); InputError `unknown` when there is none. */
export async function userByLogin(storage: Storage, login: string): Promise<UserRecord> {
  const user = await storage.users.byLogin(login);
  if (!user) throw noUser(login);
  return user;
}

const noUser = (login: string) => new InputError('username', `there is no user ${JSON.stringify(login)}`, 'unknown');

/** The change made to the user, or InputError `unknown` when they were deleted meanwhile. */
async function changed(login: string, update: Promise<UserRecord | undefined>): Promise<UserRecord> {
  const user = await update;
  if (!user) throw noUser(login);
  return user;
}

/** What a change of credentials ended besides: the user's browser sessions and, when asked, their tokens. */
export interface CredentialsChanged {
  user: UserRecord;
  sessionsEnded: number;
  /** Access tokens (each with its refresh token) and personal access tokens revoked; 0 unless asked. */
  tokensRevoked: number;
}

/**
 * After a new password or a new second factor, whoever signed in with the old ones must do so again (ASVS V3.3.3):
 * every browser session of the user ends, and with `revokeTokens` every token of theirs, OAuth and personal, too.
 */
async function endWhatOldCredentialsGave(storage: Storage, user: UserRecord, { revokeTokens = false, now = epochSeconds() }: CredentialsChangeOptions): Promise<CredentialsChanged> {
  const sessionsEnded = await storage.sessions.endAllOf(user.id);
  if (!revokeTokens) return { user, sessionsEnded, tokensRevoked: 0 };
  const tokens = await storage.tokens.unrevokedOfUser(user.id);
  for (const applicationId of new Set(tokens.map((t) => t.application_id))) await storage.tokens.revokeAuthorization(user.id, applicationId, now);
  let tokensRevoked = tokens.length;
  for (const token of await storage.personalAccessTokens.ofUser(user.id)) {
    if (!token.revoked && (await storage.personalAccessTokens.revokeOwned(user.id, token.id))) tokensRevoked += 1;
  }
  return { user, sessionsEnded, tokensRevoked };
}

export interface CredentialsChangeOptions {
  revokeTokens?: boolean;
  now?: EpochSeconds;
}

/**
 * Sets a new password for the user with this login (the admin CLI's reset): the old one stops working at once, and
 * so does every session signed in with it (and, asked, every token).
 */
export async function resetPassword(storage: Storage, login: string, password: string, options: CredentialsChangeOptions = {}): Promise<CredentialsChanged> {
  const user = await userByLogin(storage, login);
  return endWhatOldCredentialsGave(storage, await changed(login, storage.users.setPasswordHash(user.id, await hashPassword(password))), options);
}

/** Every user, by id (the admin CLI's list). */
export function listUsers(storage: Storage): Promise<UserRecord[]> {
  return storage.users.all();
}

/**
 * Blocks the user, or lets them back: a blocked user cannot sign in and none of their tokens or sessions works
 * (isActive), yet everything of theirs stays for when they are unblocked.
 */
export async function setBlocked(storage: Storage, login: string, blocked: boolean): Promise<UserRecord> {
  const user = await userByLogin(storage, login);
  return changed(login, storage.users.setState(user.id, blocked ? 'blocked' : 'active'));
}

export async function setAdmin(storage: Storage, login: string, isAdmin: boolean): Promise<UserRecord> {
  const user = await userByLogin(storage, login);
  return changed(login, storage.users.setAdmin(user.id, isAdmin));
}

/**
 * Turns two-factor authentication on with a new TOTP secret, answered once with its otpauth:// URI for an
 * authenticator app (as a personal access token is shown once), or off. Turning it on again replaces the secret;
 * turning it on ends the user's sessions (and, asked, tokens), which were signed in without it.
 */
export async function setTwoFactor(storage: Storage, login: string, on: true, options?: CredentialsChangeOptions): Promise<CredentialsChanged & { secret: string; uri: string }>;
export async function setTwoFactor(storage: Storage, login: string, on: false): Promise<{ user: UserRecord }>;
export async function setTwoFactor(storage: Storage, login: string, on: boolean, options: CredentialsChangeOptions = {}): Promise<{ user: UserRecord; secret?: string; uri?: string }> {
  const user = await userByLogin(storage, login);
  if (!on) return { user: await changed(login, storage.users.setOtpSecret(user.id, null)) };
  const secret = newOtpSecret();
  const ended = await endWhatOldCredentialsGave(storage, await changed(login, storage.users.setOtpSecret(user.id, secret)), options);
  return { ...ended, secret, uri: provisioningUri(secret, user.username) };
}

/**
 * Deletes the user and everything that is theirs (UserStorage.delete), as GitLab does; refused while they are the only
 * owner of a group, since the group would be left with no one to manage it.
 */
export async function deleteUser(storage: Storage, login: string, now: EpochSeconds = epochSeconds()): Promise<UserRecord> {
  const user = await userByLogin(storage, login);
  const result = await storage.users.delete(user.id, now);
  if (!result) throw noUser(login);
  if (!result.deleted) {
    const groups = result.soleOwnerOf.map((path) => JSON.stringify(path)).join(', ');
    throw new InputError('username', `${user.username} is the only owner of the group${result.soleOwnerOf.length > 1 ? 's' : ''} ${groups}: make another member an owner first (access level 50), or delete the group`);
  }
  return user;
}

/**
 * The active user with this login and password, or null. Unknown user, wrong password and blocked account get the
 * same answer after the same work, so neither the answer nor its timing tells which. Every check of a password (the
 * sign-in form and the password grant) comes here, so here a hash weaker than production's (needsRehash) is replaced,
 * the only moment the password is at hand.
 */
export async function authenticate(storage: Storage, login: string, password: string): Promise<UserRecord | null> {
  const user = await storage.users.byLogin(login);
  if (!user) return verifyPasswordAgainstNothing(password).then(() => null);
  const ok = await verifyPassword(password, user.password_hash);
  if (!ok || !isActive(user)) return null;
  if (!needsRehash(user.password_hash)) return user;
  const rehashed = await rehashPassword(password);
  // Only over the hash just verified: had the password been set meanwhile, the new one stays and this rehash is dropped.
  return (await storage.users.replaceVerifiedPasswordHash(user.id, user.password_hash, rehashed)) ? { ...user, password_hash: rehashed } : user;
}

/**
 * Checks a token's fields (not the store); answers them with defaults filled in; throws InputError. Given `now`, a
 * new token's, a last day already past is refused too; a seed describes state, and may hold an expired token.
 */
export function checkPersonalAccessTokenFields(input: NewPersonalAccessToken, owner: { is_admin: boolean }, now?: Date): CheckedPersonalAccessToken {
  checkText('name', input.name, 255);
  const scopes = checkScopes(input.scopes ?? ['api'], apiScopes);
  const reserved = scopes.filter((scope) => administratorScopes.includes(scope));
  if (reserved.length > 0 && !owner.is_admin) {
    throw new InputError('scopes', `${reserved.join(', ')} may be given only to an administrator's token, as on the service`);
  }
  const expires = input.expires_at ?? null;
  if (expires !== null && (typeof expires !== 'string' || !isCalendarDate(expires))) {
    throw new InputError('expires_at', `${JSON.stringify(expires)} is not a date (YYYY-MM-DD)`);
  }
  if (expires !== null && now !== undefined && isPast(expires, now)) {
    throw new InputError('expires_at', `the last valid day ${expires} has already passed: give today or a later day (UTC)`);
  }
  if (input.token !== undefined && (typeof input.token !== 'string' || !/^[\x21-\x7e]{20,255}$/.test(input.token))) {
    throw new InputError('token', 'must be 20 to 255 printable ASCII characters without spaces');
  }
  return { name: input.name.trim(), scopes, expires_at: expires, ...(input.token === undefined ? {} : { token: input.token }) };
}

/** Creates a token; the plain token is answered once here and stored only as a digest. */
export async function createPersonalAccessToken(
  storage: Storage,
  userId: number,
  input: NewPersonalAccessToken,
  now: Date = new Date(),
): Promise<{ record: PersonalAccessTokenRecord; token: string }> {
  const owner = await storage.users.byId(userId);
  if (!owner) throw new InputError('user_id', `there is no user ${userId}`, 'unknown');
  const checked = checkPersonalAccessTokenFields(input, owner, now);
  const token = checked.token ?? newSecret('personalAccessToken');
  const record = await storage.personalAccessTokens.create(newPersonalAccessTokenRow(userId, checked, token));
  return { record, token };
}

/** The stored form of a checked token: its digest, never the token. */
export function newPersonalAccessTokenRow(userId: number, input: CheckedPersonalAccessToken, token: string): Omit<PersonalAccessTokenRecord, 'id'> {
  return {
    user_id: userId,
    name: input.name,
    token_digest: digest(token),
    scopes: [...input.scopes],
    created_at: epochSeconds(),
    expires_at: input.expires_at,
    revoked: false,
  };
}

/**
 * The token's record if it may be used at `now`: not revoked, not past the end (UTC) of its last day, and its
 * user exists and is not blocked.
 */
export async function findActivePersonalAccessToken(
  storage: Storage,
  token: string,
  now: Date = new Date(),
): Promise<({ record: PersonalAccessTokenRecord } & Account) | null> {
  const found = await storage.personalAccessTokens.withUserByDigest(digest(token));
  if (!found || found.token.revoked || !isActive(found.user)) return null;
  if (found.token.expires_at !== null && isPast(found.token.expires_at, now)) return null;
  return { record: found.token, user: found.user, globalSetting: found.globalSetting };
}

/** The user's tokens, newest first. */
export function listPersonalAccessTokens(storage: Storage, userId: number): Promise<PersonalAccessTokenRecord[]> {
  return storage.personalAccessTokens.ofUser(userId);
}

/** Revokes one of the user's tokens; null when the user has no such token (another user's token included). */
export function revokePersonalAccessToken(storage: Storage, userId: number, id: number): Promise<PersonalAccessTokenRecord | null> {
  return storage.personalAccessTokens.revokeOwned(userId, id);
}

/**
 * Whether `address` is one of the user's own: their primary e-mail or a secondary one, whatever the case (as GitLab
 * keeps addresses lower-cased). Only an address the user owns may receive their notification mail.
 */
export function ownsEmail(user: UserRecord, address: string): boolean {
  const wanted = address.toLowerCase();
  return [user.email, ...user.secondary_emails].some((own) => own.toLowerCase() === wanted);
}

function checkEmail(field: string, value: unknown): void {
  if (typeof value !== 'string' || value.length > 254 || !emailPattern.test(value)) {
    throw new InputError(field, `${JSON.stringify(value)} is not an e-mail address`);
  }
}

/** Each a well-formed address, none twice and none the primary one, whatever the case (the store sees to other users'). */
function checkSecondaryEmails(primary: string, value: unknown): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) throw new InputError('secondary_emails', 'must be an array');
  const seen = new Set([primary.toLowerCase()]);
  value.forEach((email: unknown, i) => {
    const field = `secondary_emails[${i}]`;
    checkEmail(field, email);
    const folded = (email as string).toLowerCase();
    if (folded === primary.toLowerCase()) throw new InputError(field, `the e-mail address ${JSON.stringify(email)} is already the user's primary one`, 'taken');
    if (seen.has(folded)) throw new InputError(field, `the e-mail address ${JSON.stringify(email)} is listed twice`, 'taken');
    seen.add(folded);
  });
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

/** Whether `now` is after the end (UTC) of the last valid day `day`: the one rule of a token's expiry. */
function isPast(day: string, now: Date): boolean {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return now.getTime() >= Date.UTC(y, m - 1, d + 1);
}
