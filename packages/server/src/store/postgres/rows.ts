// The tables' rows as pg reads them, and the records they make, for the rows several modules read: an aggregate reads
// a user or a project, and so do the inserts that create one and the lookups that answer one with a credential. A row
// only one aggregate reads stays in its module.
import type { ApiScope, ApplicationRecord, Group, PersonalAccessTokenRecord, Project, Scope, UserRecord, Visibility } from '../../domain/storage/index.js';

export const at = (seconds: number) => new Date(seconds * 1000);
export const atOrNull = (seconds: number | null | undefined) => (seconds == null ? null : at(seconds));
export const epoch = (time: Timestamp) => Math.floor((typeof time === 'string' ? Date.parse(time) : time.getTime()) / 1000);
// A row read column by column has bigints as text and times as Dates; one read through row_to_json (the credential
// lookups, one JSON value instead of a dozen columns, which pg turns into objects far faster) has numbers and ISO
// text. The conversions take either.
export type Bigint = string | number;
export type Timestamp = Date | string;
// What the file store cannot find, PostgreSQL must not fail on: a NaN id from a route parameter is no bigint, and a
// NUL character is no text, so either would be an error there instead of "not found". Half of a surrogate pair (a
// JSON escape makes one) is no text either: UTF-8 cannot encode it, so pg would send U+FFFD in its place, and a
// lookup would find a row the file store does not. Every lookup asks isText first; TextOnlyClient refuses the rest.
export const isId = (id: number) => Number.isSafeInteger(id);
const notText = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
export const isText = (text: string) => !notText.test(text);

export interface UserRow {
  id: Bigint;
  username: string;
  email: string;
  secondary_emails: string[];
  name: string;
  password_hash: string;
  two_factor_enabled: boolean;
  otp_secret: string | null;
  otp_last_step: Bigint | null;
  state: UserRecord['state'];
  is_admin: boolean;
  bio: string;
  created_at: Timestamp;
}
/** The secondary addresses of the user `users` (an alias of the users table), in order: user_emails holds the primary one at 0. */
export const secondaryEmailsOf = (users: string) => `ARRAY(SELECT e.email FROM user_emails e WHERE e.user_id = ${users}.id AND e.position > 0 ORDER BY e.position)`;
export const userColumns = `users.id, users.username, users.email, ${secondaryEmailsOf('users')} AS secondary_emails, users.name, users.password_hash,
  users.two_factor_enabled, users.otp_secret, users.otp_last_step, users.state, users.is_admin, users.bio, users.created_at`;
export const userOf = (row: UserRow): UserRecord => ({
  id: Number(row.id),
  username: row.username,
  email: row.email,
  secondary_emails: row.secondary_emails,
  name: row.name,
  password_hash: row.password_hash,
  two_factor_enabled: row.two_factor_enabled,
  otp_secret: row.otp_secret,
  otp_last_step: row.otp_last_step === null ? null : Number(row.otp_last_step),
  state: row.state,
  is_admin: row.is_admin,
  bio: row.bio,
  created_at: epoch(row.created_at),
});

export interface GroupRow {
  id: string;
  path: string;
  name: string;
  visibility: Visibility;
  created_at: Date;
}
export const groupColumns = 'id, path, name, visibility, created_at';
export const groupOf = (row: GroupRow): Group => ({ id: Number(row.id), path: row.path, name: row.name, visibility: row.visibility, created_at: epoch(row.created_at) });

export interface ProjectRow extends GroupRow {
  namespace: string;
  group_id: string | null;
}
export const projectColumns = 'id, namespace, path, name, visibility, group_id, created_at';
export const projectOf = (row: ProjectRow): Project => ({
  id: Number(row.id),
  namespace: row.namespace,
  path: row.path,
  name: row.name,
  visibility: row.visibility,
  group_id: row.group_id === null ? null : Number(row.group_id),
  created_at: epoch(row.created_at),
});

export interface ApplicationRow {
  id: string;
  uid: string;
  secret_digest: string | null;
  confidential: boolean;
  name: string;
  redirect_uris: string[];
  scopes: Scope[];
  owner_id: string;
  created_at: Date;
}
export const applicationColumns = 'id, uid, secret_digest, confidential, name, redirect_uris, scopes, owner_id, created_at';
export const applicationOf = (row: ApplicationRow): ApplicationRecord => ({
  id: Number(row.id),
  uid: row.uid,
  secret_digest: row.secret_digest,
  confidential: row.confidential,
  name: row.name,
  redirect_uris: row.redirect_uris,
  scopes: row.scopes,
  owner_id: Number(row.owner_id),
  created_at: epoch(row.created_at),
});

export interface PersonalAccessTokenRow {
  id: Bigint;
  user_id: Bigint;
  name: string;
  token_digest: string;
  scopes: ApiScope[];
  created_at: Timestamp;
  expires_at: string | null;
  revoked: boolean;
}
// The day as written, never through a Date: that would shift it by the server's time zone.
export const personalAccessTokenColumns = `id, user_id, name, token_digest, scopes, created_at, to_char(expires_at, 'YYYY-MM-DD') AS expires_at, revoked`;
export const personalAccessTokenOf = (row: PersonalAccessTokenRow): PersonalAccessTokenRecord => ({
  id: Number(row.id),
  user_id: Number(row.user_id),
  name: row.name,
  token_digest: row.token_digest,
  scopes: row.scopes,
  created_at: epoch(row.created_at),
  expires_at: row.expires_at,
  revoked: row.revoked,
});
