// The storage interfaces on PostgreSQL, for several instances sharing one database. Unique names are the unique
// indexes' job: an insert that loses a race fails with a unique violation, which becomes the same InputError the file
// store throws. The one rule no index can hold, that a username is never a group's path and the other way round, is
// kept by a transaction advisory lock on the lower-cased name, taken by whoever creates either.
import { InputError } from '../../explained-error.js';
import { postgresGrantStorage } from './grants.js';
import { postgresNotificationSettingsStorage, settingOf, type SettingRow } from './notification-settings.js';
import { postgresSessionStorage } from './sessions.js';
import type {
  AccessTokenRecord,
  Account,
  ApplicationRecord,
  Audience,
  AudienceMember,
  AuthorizationCodeRecord,
  FoundNames,
  Group,
  GroupAccess,
  Membership,
  NamespaceRef,
  NewApplicationRow,
  NewGroupRow,
  NewPersonalAccessTokenRow,
  NewProjectRow,
  NewTokenPair,
  NewUserRow,
  OutboxMessageRecord,
  PersonalAccessTokenRecord,
  Project,
  ProjectAccess,
  Scope,
  SeedRows,
  Storage,
  UserRecord,
  Visibility,
} from '../../domain/storage/index.js';
import { instanceSecret, pruneExpired } from './maintenance.js';
import { type Ask, batched } from './batch.js';
import { askedRows, largestBatch, statement } from './statements.js';
import { transaction } from './transaction.js';
import type pg from 'pg';

type Queryable = pg.Pool | pg.PoolClient;

const UNIQUE_VIOLATION = '23505';
const FOREIGN_KEY_VIOLATION = '23503';
/** The advisory lock space of user and group names (an arbitrary constant of tokenbell's, the seed of the hash). */
const nameLock = 0x6e_61_6d_65;

const at = (seconds: number) => new Date(seconds * 1000);
const epoch = (time: Timestamp) => Math.floor((typeof time === 'string' ? Date.parse(time) : time.getTime()) / 1000);
// A row read column by column has bigints as text and times as Dates; one read through row_to_json (the credential
// lookups below, one JSON value instead of a dozen columns, which pg turns into objects far faster) has numbers and
// ISO text. The conversions take either.
type Bigint = string | number;
type Timestamp = Date | string;
const quoted = (text: string) => JSON.stringify(text);
// What the file store cannot find, PostgreSQL must not fail on: a NaN id from a route parameter is no bigint, and a
// NUL character is no text, so either would be an error there instead of "not found".
const isId = (id: number) => Number.isSafeInteger(id);
const isText = (text: string) => !text.includes('\0');

// The file store's refusals, word for word; a seed words a few of them its own way.
const taken = (field: string, message: string) => new InputError(field, message, 'taken');
const refusal = {
  username: (username: string) => taken('username', `the username ${quoted(username)} is already taken`),
  usernameIsGroup: (username: string) => taken('username', `the username ${quoted(username)} is already a group's path`),
  email: (email: string) => taken('email', `the e-mail address ${quoted(email)} is already in use`),
  secondaryEmail: (email: string) => taken('secondary_emails', `the e-mail address ${quoted(email)} is already in use`),
  group: (path: string) => taken('path', `the group ${quoted(path)} already exists`),
  groupIsUsername: (path: string) => taken('path', `${quoted(path)} is already a username`),
  project: (fullPath: string) => taken('path', `the project ${quoted(fullPath)} already exists`),
  uid: (uid: string) => taken('uid', `the App ID ${quoted(uid)} is already taken`),
  token: () => taken('token', 'this token is already in use'),
  unknownMember: (field: 'user_id' | 'group_id' | 'project_id', id: number) => new InputError(field, `there is no ${field.slice(0, -3)} with id ${id}`, 'unknown'),
};
type Wording = 'create' | 'seed';

/** `statement`, with a violation (`violation`, an error code) of one of `refusals`' constraints thrown as that refusal. */
async function refusing<T>(violation: string, statement: Promise<T>, refusals: Record<string, () => InputError>): Promise<T> {
  try {
    return await statement;
  } catch (error) {
    const { code, constraint } = error as { code?: string; constraint?: string };
    if (code === violation && constraint !== undefined && Object.hasOwn(refusals, constraint)) throw refusals[constraint]!();
    throw error;
  }
}

/** `statement`, with a unique violation of one of `refusals`' indexes thrown as that refusal. */
const refusingTaken = <T>(statement: Promise<T>, refusals: Record<string, () => InputError>) => refusing(UNIQUE_VIOLATION, statement, refusals);

/** Held until the transaction ends: whoever creates a user or a group of this name, whatever its case, waits. */
const lockName = (client: pg.PoolClient, name: string) => client.query('SELECT pg_advisory_xact_lock(hashtextextended(lower($1), $2))', [name, nameLock]);

interface UserRow {
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
const secondaryEmailsOf = (users: string) => `ARRAY(SELECT e.email FROM user_emails e WHERE e.user_id = ${users}.id AND e.position > 0 ORDER BY e.position)`;
const userColumns = `users.id, users.username, users.email, ${secondaryEmailsOf('users')} AS secondary_emails, users.name, users.password_hash,
  users.two_factor_enabled, users.otp_secret, users.otp_last_step, users.state, users.is_admin, users.bio, users.created_at`;
const userOf = (row: UserRow): UserRecord => ({
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

/**
 * What `select` reads from `from` where `where` holds, for each ask of the rows `q` (askedRows) on its own: LATERAL,
 * kept from merging into a join by OFFSET 0, so each ask is an index lookup whatever the batch's size.
 */
const eachAsk = (select: string, from: string, where: string) => (asked: string) =>
  `SELECT q.key, f.* FROM ${asked} CROSS JOIN LATERAL (SELECT ${select} FROM ${from} WHERE ${where} OFFSET 0) f`;

/**
 * Credentials found by their digests, each with its user and their global setting in one JSON value: `credential` is
 * the credential's table, aliased `c` (both kinds have a unique `token_digest`).
 */
const credentialsLookup = (credential: string) =>
  eachAsk(
    `json_build_object('credential', row_to_json(c), 'owner', row_to_json(u), 'owner_secondary_emails', ${secondaryEmailsOf('u')}, 'global', row_to_json(g)) AS found`,
    `${credential} c JOIN users u ON u.id = c.user_id
     LEFT JOIN notification_settings g ON g.user_id = u.id AND g.source_type = 'global' AND coalesce(g.source_id, 0) = 0`,
    'c.token_digest = q.key',
  );
interface FoundCredential<R> {
  key: string;
  found: { credential: R; owner: Omit<UserRow, 'secondary_emails'>; owner_secondary_emails: string[]; global: SettingRow | null };
}
function accountOf({ owner, owner_secondary_emails, global }: FoundCredential<unknown>['found']): Account {
  return { user: userOf({ ...owner, secondary_emails: owner_secondary_emails }), globalSetting: global === null ? undefined : settingOf(global) };
}

interface GroupRow {
  id: string;
  path: string;
  name: string;
  visibility: Visibility;
  created_at: Date;
}
const groupColumns = 'id, path, name, visibility, created_at';
const groupOf = (row: GroupRow): Group => ({ id: Number(row.id), path: row.path, name: row.name, visibility: row.visibility, created_at: epoch(row.created_at) });

interface ProjectRow extends GroupRow {
  namespace: string;
  group_id: string | null;
}
/** A user's standing on a group or project, as the queries below read it; `user` is the user's id in SQL. */
interface AccessRow {
  direct: number | null;
  inherited?: number | null;
  in_a_project?: boolean;
}
const projectStanding = (user: string) => `(SELECT access_level FROM project_members WHERE project_id = p.id AND user_id = ${user}) AS direct,
  (SELECT access_level FROM group_members WHERE group_id = p.group_id AND user_id = ${user}) AS inherited`;
const groupStanding = (user: string) => `(SELECT access_level FROM group_members WHERE group_id = g.id AND user_id = ${user}) AS direct,
  EXISTS (SELECT 1 FROM project_members JOIN projects ON projects.id = project_members.project_id
          WHERE project_members.user_id = ${user} AND projects.group_id = g.id) AS in_a_project`;
const projectAccessOf = (row: AccessRow): ProjectAccess => ({ direct: row.direct, inherited: row.inherited ?? null });
const groupAccessOf = (row: AccessRow): GroupAccess => ({ direct: row.direct, inAProject: row.in_a_project === true });

const projectColumns = 'id, namespace, path, name, visibility, group_id, created_at';

/**
 * Groups or projects (`table`, aliased `alias`, read as `columns`) each with a user's standing, for the asks `q`
 * (askedRows: a key, an id or a path matched lower-cased by `path`, and a user), each looked up on its own.
 */
function namespaceLookups(table: 'groups' | 'projects', alias: 'g' | 'p', columns: string, standing: (user: string) => string, path: string) {
  const select = `${columns.split(', ').map((column) => `${alias}.${column}`).join(', ')}, ${standing('q.user_id')}`;
  return { byId: eachAsk(select, `${table} ${alias}`, `${alias}.id = q.id`), byPath: eachAsk(select, `${table} ${alias}`, `${path} = lower(q.path)`) };
}
const projectLookups = namespaceLookups('projects', 'p', projectColumns, projectStanding, `lower(p.namespace || '/' || p.path)`);
const groupLookups = namespaceLookups('groups', 'g', groupColumns, groupStanding, 'lower(g.path)');
const projectOf = (row: ProjectRow): Project => ({
  id: Number(row.id),
  namespace: row.namespace,
  path: row.path,
  name: row.name,
  visibility: row.visibility,
  group_id: row.group_id === null ? null : Number(row.group_id),
  created_at: epoch(row.created_at),
});

interface ApplicationRow {
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
const applicationColumns = 'id, uid, secret_digest, confidential, name, redirect_uris, scopes, owner_id, created_at';
const applicationOf = (row: ApplicationRow): ApplicationRecord => ({
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

interface PersonalAccessTokenRow {
  id: Bigint;
  user_id: Bigint;
  name: string;
  token_digest: string;
  scopes: Scope[];
  created_at: Timestamp;
  expires_at: string | null;
  revoked: boolean;
}
// The day as written, never through a Date: that would shift it by the server's time zone.
const personalAccessTokenColumns = `id, user_id, name, token_digest, scopes, created_at, to_char(expires_at, 'YYYY-MM-DD') AS expires_at, revoked`;
const personalAccessTokenOf = (row: PersonalAccessTokenRow): PersonalAccessTokenRecord => ({
  id: Number(row.id),
  user_id: Number(row.user_id),
  name: row.name,
  token_digest: row.token_digest,
  scopes: row.scopes,
  created_at: epoch(row.created_at),
  expires_at: row.expires_at,
  revoked: row.revoked,
});

interface AccessTokenRow {
  id: string;
  token_digest: string;
  refresh_digest: string | null;
  application_id: Bigint | null;
  user_id: Bigint;
  scopes: Scope[];
  created_at: Timestamp;
  expires_in: number;
  revoked_at: Timestamp | null;
  code_id: string | null;
}
const accessTokenColumns = 'id, token_digest, refresh_digest, application_id, user_id, scopes, created_at, expires_in, revoked_at, code_id';
const accessTokenOf = (row: AccessTokenRow): AccessTokenRecord => ({
  id: row.id,
  token_digest: row.token_digest,
  refresh_digest: row.refresh_digest,
  application_id: row.application_id === null ? null : Number(row.application_id),
  user_id: Number(row.user_id),
  scopes: row.scopes,
  created_at: epoch(row.created_at),
  expires_in: row.expires_in,
  revoked_at: row.revoked_at === null ? null : epoch(row.revoked_at),
  code_id: row.code_id,
});

interface OutboxRow {
  id: string;
  event_id: string;
  user_id: string;
  recipient: string;
  subject: string;
  body: string;
  headers: Record<string, string>;
  status: OutboxMessageRecord['status'];
  attempts: number;
  next_attempt_at: Date;
  claimed_until: Date | null;
  last_error: string | null;
  created_at: Date;
  sent_at: Date | null;
}
const outboxColumns = 'id, event_id, user_id, recipient, subject, body, headers, status, attempts, next_attempt_at, claimed_until, last_error, created_at, sent_at';
const outboxOf = (row: OutboxRow): OutboxMessageRecord => ({
  id: row.id,
  event_id: row.event_id,
  user_id: Number(row.user_id),
  to: row.recipient,
  subject: row.subject,
  text: row.body,
  headers: row.headers,
  status: row.status,
  attempts: row.attempts,
  next_attempt_at: epoch(row.next_attempt_at),
  claimed_until: row.claimed_until === null ? null : epoch(row.claimed_until),
  last_error: row.last_error,
  created_at: epoch(row.created_at),
  sent_at: row.sent_at === null ? null : epoch(row.sent_at),
});

async function insertUser(client: pg.PoolClient, user: NewUserRow, wording: Wording): Promise<UserRecord> {
  await lockName(client, user.username);
  const group = await client.query('SELECT 1 FROM groups WHERE lower(path) = lower($1)', [user.username]);
  if (group.rowCount) throw wording === 'seed' ? refusal.username(user.username) : refusal.usernameIsGroup(user.username);
  const { rows } = await refusingTaken(
    client.query<UserRow>(
      `INSERT INTO users (username, email, name, password_hash, two_factor_enabled, otp_secret, otp_last_step, state, is_admin, bio, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${userColumns}`,
      [user.username, user.email, user.name, user.password_hash, user.two_factor_enabled, user.otp_secret ?? null, user.otp_last_step ?? null, user.state, user.is_admin, user.bio, at(user.created_at)],
    ),
    // The trigger copies the primary address into user_emails, whose index holds every user's secondary ones too.
    { users_username_key: () => refusal.username(user.username), users_email_key: () => refusal.email(user.email), user_emails_email_key: () => refusal.email(user.email) },
  );
  const record = userOf(rows[0]!);
  if (user.secondary_emails.length === 0) return record;
  // DO NOTHING rather than a unique violation, to name the address refused: one that did not go in is in use (by
  // another user, or by this one already); an uncommitted insert of the same address is waited for, not skipped.
  const { rows: added } = await client.query<{ position: number }>(
    `INSERT INTO user_emails (user_id, position, email) SELECT $1, n, email FROM unnest($2::text[]) WITH ORDINALITY AS s (email, n)
     ON CONFLICT ((lower(email))) DO NOTHING RETURNING position`,
    [record.id, [...user.secondary_emails]],
  );
  const inserted = new Set(added.map((row) => row.position));
  const refused = user.secondary_emails.find((_, i) => !inserted.has(i + 1));
  if (refused !== undefined) throw refusal.secondaryEmail(refused);
  return { ...record, secondary_emails: [...user.secondary_emails] };
}

/** Adds the members in the order listed; a user listed twice keeps the first level, as the file store reads it. */
async function insertMembers(client: pg.PoolClient, table: 'group_members' | 'project_members', id: number, members: readonly Membership[]) {
  if (members.length === 0) return;
  const owner = table === 'group_members' ? 'group_id' : 'project_id';
  await client.query(
    `INSERT INTO ${table} (${owner}, user_id, access_level)
     SELECT $1, m.user_id, m.access_level FROM unnest($2::bigint[], $3::integer[]) WITH ORDINALITY AS m (user_id, access_level, n) ORDER BY m.n
     ON CONFLICT (${owner}, user_id) DO NOTHING`,
    [id, members.map((m) => m.user_id), members.map((m) => m.access_level)],
  );
}

async function insertGroup(client: pg.PoolClient, group: NewGroupRow, members: readonly Membership[], wording: Wording): Promise<Group> {
  await lockName(client, group.path);
  const user = await client.query('SELECT 1 FROM users WHERE lower(username) = lower($1)', [group.path]);
  if (user.rowCount) throw wording === 'seed' ? refusal.group(group.path) : refusal.groupIsUsername(group.path);
  const { rows } = await refusingTaken(
    client.query<GroupRow>(`INSERT INTO groups (path, name, visibility, created_at) VALUES ($1, $2, $3, $4) RETURNING ${groupColumns}`, [group.path, group.name, group.visibility, at(group.created_at)]),
    { groups_path_key: () => refusal.group(group.path) },
  );
  const record = groupOf(rows[0]!);
  await insertMembers(client, 'group_members', record.id, members);
  return record;
}

async function insertProject(client: pg.PoolClient, { namespace, ...project }: NewProjectRow, members: readonly Membership[], wording: Wording): Promise<Project> {
  // Names never change and neither users nor groups are deleted, so the namespace found stays valid without a lock.
  const { rows: owners } = await client.query<{ namespace: string; group_id: string | null }>(
    `SELECT path AS namespace, id AS group_id FROM groups WHERE lower(path) = lower($1)
     UNION ALL
     SELECT username, NULL FROM users WHERE lower(username) = lower($1)`,
    [namespace],
  );
  const owner = owners.find((o) => o.group_id !== null) ?? owners[0];
  if (!owner) throw new InputError('namespace', `${quoted(namespace)} is neither a group's path nor a username`, 'unknown');
  const fullPath = `${wording === 'seed' ? namespace : owner.namespace}/${project.path}`;
  const { rows } = await refusingTaken(
    client.query<ProjectRow>(`INSERT INTO projects (namespace, path, name, visibility, group_id, created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${projectColumns}`, [
      owner.namespace,
      project.path,
      project.name,
      project.visibility,
      owner.group_id,
      at(project.created_at),
    ]),
    { projects_full_path_key: () => refusal.project(fullPath) },
  );
  const record = projectOf(rows[0]!);
  await insertMembers(client, 'project_members', record.id, members);
  return record;
}

async function insertApplication(db: Queryable, application: NewApplicationRow): Promise<ApplicationRecord> {
  const { rows } = await refusingTaken(
    db.query<ApplicationRow>(
      `INSERT INTO applications (uid, secret_digest, confidential, name, redirect_uris, scopes, owner_id, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${applicationColumns}`,
      [
        application.uid,
        application.secret_digest,
        // Records from before the choice existed were all confidential, and had a secret.
        application.confidential ?? application.secret_digest !== null,
        application.name,
        [...application.redirect_uris],
        [...application.scopes],
        application.owner_id,
        at(application.created_at),
      ],
    ),
    { applications_uid_key: () => refusal.uid(application.uid) },
  );
  return applicationOf(rows[0]!);
}

async function insertPersonalAccessToken(db: Queryable, token: NewPersonalAccessTokenRow): Promise<PersonalAccessTokenRecord> {
  const { rows } = await refusingTaken(
    db.query<PersonalAccessTokenRow>(
      `INSERT INTO personal_access_tokens (user_id, name, token_digest, scopes, created_at, expires_at, revoked)
       VALUES ($1, $2, $3, $4, $5, $6::date, $7) RETURNING ${personalAccessTokenColumns}`,
      [token.user_id, token.name, token.token_digest, [...token.scopes], at(token.created_at), token.expires_at, token.revoked],
    ),
    { personal_access_tokens_token_digest_key: () => refusal.token() },
  );
  return personalAccessTokenOf(rows[0]!);
}

/** The ids of users named in a seed, by the name as written; a name no user has is an error. */
async function userIdsByName(client: pg.PoolClient, names: readonly string[]): Promise<(name: string) => number> {
  const { rows } = await client.query<{ name: string; id: string }>(
    'SELECT asked.name, users.id FROM unnest($1::text[]) AS asked (name) JOIN users ON lower(users.username) = lower(asked.name)',
    [[...new Set(names)]],
  );
  const ids = new Map(rows.map((row) => [row.name, Number(row.id)]));
  return (name) => {
    const id = ids.get(name);
    if (id === undefined) throw new InputError('username', `there is no user ${quoted(name)}`, 'unknown');
    return id;
  };
}

/** Of the names asked, those a query finds, by the lower-cased name asked; `sql` joins `asked (name)` to the table. */
async function found(db: pg.Pool, names: readonly string[], sql: string): Promise<Map<string, string>> {
  const map = new Map<string, string>();
  const asked = names.filter(isText);
  if (asked.length === 0) return map;
  const { rows } = await db.query<{ name: string; stored: string }>(sql, [asked]);
  for (const row of rows) map.set(row.name.toLowerCase(), row.stored);
  return map;
}

/** An error's message without what a connection string may carry before its host (a user name and a password). */
const withoutCredentials = (message: string) => message.replace(/\/\/[^\s/@]*@/g, '//');

export interface PostgresStorageOptions {
  /** What the listening line says the data lives in (default `PostgreSQL`). */
  describe?: string;
}

export function postgresStorage(pool: pg.Pool, options: PostgresStorageOptions = {}): Storage {
  let observer: ((seconds: number) => void) | null = null;
  let closing: Promise<void> | undefined;

  /** A write, timed for the store write latency metric when it succeeds. */
  async function observed<T>(write: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const result = await write();
    observer?.((performance.now() - started) / 1000);
    return result;
  }
  const inTransaction = <T>(work: (client: pg.PoolClient) => Promise<T>) => observed(() => transaction(pool, work));
  const write = <R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, values: unknown[]) => observed(() => pool.query<R>(sql, values));

  async function one<R extends pg.QueryResultRow, T>(sql: string, values: unknown[], convert: (row: R) => T): Promise<T | undefined> {
    const { rows } = await pool.query<R>(statement(sql, values));
    return rows[0] && convert(rows[0]);
  }

  /**
   * Batched lookups (batch.ts): `sql` reads the asks from the rows `q` whose `columns` (of `types`) `values` gives for
   * each ask (askedRows), in statements of at most `largestBatch` asks.
   */
  function lookup<A extends Ask, R extends Ask>(sql: (asked: string) => string, columns: readonly string[], types: readonly string[], values: (ask: A) => unknown[]) {
    // The statement for each number of asks, built once rather than per batch.
    const shapes = new Map<number, { text: string; padding: number }>();
    const read = async (asks: A[]) => {
      let shape = shapes.get(asks.length);
      if (!shape) {
        const { sql: asked, padding } = askedRows(asks.length, columns, types);
        shapes.set(asks.length, (shape = { text: sql(asked), padding }));
      }
      return (await pool.query<R>(statement(shape.text, [...asks.flatMap(values), ...Array(shape.padding).fill(null)]))).rows;
    };
    return batched<A, R>(async (asks) => {
      const chunks = Array.from({ length: Math.ceil(asks.length / largestBatch) }, (_, i) => asks.slice(i * largestBatch, (i + 1) * largestBatch));
      return (await Promise.all(chunks.map(read))).flat();
    });
  }

  const credentialFinder = <R>(table: string) => lookup<Ask, FoundCredential<R>>(credentialsLookup(table), ['key'], ['text'], (ask) => [ask.key]);
  const accessTokenByDigest = credentialFinder<AccessTokenRow>('access_tokens');
  const personalAccessTokenByDigest = credentialFinder<PersonalAccessTokenRow>('personal_access_tokens');

  // Every token request authenticates its client; introspection and revocation find a token, its user and its
  // application.
  type IdAsk = Ask & { id: number };
  const byId = <R>(select: string, from: string) => lookup<IdAsk, R & Ask>(eachAsk(select, from, `${from}.id = q.id`), ['key', 'id'], ['text', 'bigint'], (ask) => [ask.key, ask.id]);
  const byText = <R>(select: string, from: string, column: string) => lookup<Ask, R & Ask>(eachAsk(select, from, `${from}.${column} = q.key`), ['key'], ['text'], (ask) => [ask.key]);
  const applicationByUid = byText<ApplicationRow>(applicationColumns, 'applications', 'uid');
  const applicationById = byId<ApplicationRow>(applicationColumns, 'applications');
  const userById = byId<UserRow>(userColumns, 'users');
  const tokenByAccessDigest = byText<AccessTokenRow>(accessTokenColumns, 'access_tokens', 'token_digest');
  const tokenByRefreshDigest = byText<AccessTokenRow>(accessTokenColumns, 'access_tokens', 'refresh_digest');

  type NamespaceAsk = Ask & { value: number | string; userId: number };
  const namespaceFinders = <R extends Ask>(lookups: { byId: (asked: string) => string; byPath: (asked: string) => string }) => {
    const values = (ask: NamespaceAsk) => [ask.key, ask.value, ask.userId];
    const findById = lookup<NamespaceAsk, R>(lookups.byId, ['key', 'id', 'user_id'], ['text', 'bigint', 'bigint'], values);
    const findByPath = lookup<NamespaceAsk, R>(lookups.byPath, ['key', 'path', 'user_id'], ['text', 'text', 'bigint'], values);
    /** The group or project `ref` names, with the standing of user `userId`. */
    return (ref: NamespaceRef, userId: number): Promise<R | undefined> => {
      if ('id' in ref ? !isId(ref.id) : !isText(ref.path)) return Promise.resolve(undefined);
      return 'id' in ref ? findById({ key: `${userId}:${ref.id}`, value: ref.id, userId }) : findByPath({ key: `${userId}:${ref.path}`, value: ref.path, userId });
    };
  };
  const projectWithAccess = namespaceFinders<ProjectRow & AccessRow & Ask>(projectLookups);
  const groupWithAccess = namespaceFinders<GroupRow & AccessRow & Ask>(groupLookups);

  async function projectById(id: number): Promise<Project | undefined> {
    if (!isId(id)) return undefined;
    return one(`SELECT ${projectColumns} FROM projects WHERE id = $1`, [id], projectOf);
  }

  /**
   * Runs a revoking UPDATE twice; answers how many pairs it revoked. A refresh rotation or code redemption still in
   * flight when the first pass ran holds the row it replaces, so the first pass waits for it and then skips that row
   * (revoked by now); the pair it added is visible only to a statement that starts after it committed: the second.
   */
  async function revokeTwice(client: pg.PoolClient, sql: string, values: unknown[]): Promise<number> {
    const first = await client.query(sql, values);
    const second = await client.query(sql, values);
    return (first.rowCount ?? 0) + (second.rowCount ?? 0);
  }

  return {
    users: {
      async byId(id) {
        if (!isId(id)) return undefined;
        const row = await userById({ key: String(id), id });
        return row && userOf(row);
      },
      async byUsername(username) {
        if (!isText(username)) return undefined;
        return one(`SELECT ${userColumns} FROM users WHERE lower(username) = lower($1)`, [username], userOf);
      },
      async byLogin(login) {
        if (!isText(login)) return undefined;
        // A username wins over another user's e-mail address of the same spelling, as in the file store.
        return one(
          `SELECT ${userColumns} FROM users WHERE lower(username) = lower($1) OR lower(email) = lower($1)
           ORDER BY lower(username) = lower($1) DESC LIMIT 1`,
          [login],
          userOf,
        );
      },
      async any() {
        const { rows } = await pool.query<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM users) AS any');
        return rows[0]!.any;
      },
      create(user) {
        return inTransaction((client) => insertUser(client, user, 'create'));
      },
      async setPasswordHash(id, passwordHash) {
        if (!isId(id)) return undefined;
        const { rows } = await write<UserRow>(`UPDATE users SET password_hash = $2 WHERE id = $1 RETURNING ${userColumns}`, [id, passwordHash]);
        return rows[0] && userOf(rows[0]);
      },
      async spendOtpStep(id, step) {
        if (!isId(id)) return false;
        const result = await write(`UPDATE users SET otp_last_step = $2 WHERE id = $1 AND state = 'active' AND (otp_last_step IS NULL OR otp_last_step < $2)`, [id, step]);
        return result.rowCount === 1;
      },
    },

    namespaces: {
      async groupById(id) {
        if (!isId(id)) return undefined;
        return one(`SELECT ${groupColumns} FROM groups WHERE id = $1`, [id], groupOf);
      },
      async groupByPath(path) {
        if (!isText(path)) return undefined;
        return one(`SELECT ${groupColumns} FROM groups WHERE lower(path) = lower($1)`, [path], groupOf);
      },
      projectById,
      async projectByFullPath(fullPath) {
        if (!isText(fullPath)) return undefined;
        return one(`SELECT ${projectColumns} FROM projects WHERE lower(namespace || '/' || path) = lower($1)`, [fullPath], projectOf);
      },
      async projectAccess(userId, project) {
        if (!isId(userId)) return { direct: null, inherited: null };
        const { rows } = await pool.query<AccessRow>(statement(`SELECT ${projectStanding('$2')} FROM projects p WHERE p.id = $1`, [project.id, userId]));
        return rows[0] ? projectAccessOf(rows[0]) : { direct: null, inherited: null };
      },
      async groupAccess(userId, group) {
        if (!isId(userId)) return { direct: null, inAProject: false };
        const { rows } = await pool.query<AccessRow>(statement(`SELECT ${groupStanding('$2')} FROM groups g WHERE g.id = $1`, [group.id, userId]));
        return rows[0] ? groupAccessOf(rows[0]) : { direct: null, inAProject: false };
      },
      async projectWithAccess(ref, userId) {
        const found = await projectWithAccess(ref, userId);
        return found && { project: projectOf(found), access: projectAccessOf(found) };
      },
      async groupWithAccess(ref, userId) {
        const found = await groupWithAccess(ref, userId);
        return found && { group: groupOf(found), access: groupAccessOf(found) };
      },
      createGroup(group, members) {
        return inTransaction((client) => insertGroup(client, group, members, 'create'));
      },
      createProject(project, members) {
        return inTransaction((client) => insertProject(client, project, members, 'create'));
      },
      async setMembership(target, userId, accessLevel) {
        const [table, owner, id] = 'groupId' in target ? (['group_members', 'group_id', target.groupId] as const) : (['project_members', 'project_id', target.projectId] as const);
        if (!isId(id)) throw refusal.unknownMember(owner, id);
        if (!isId(userId)) throw refusal.unknownMember('user_id', userId);
        await refusing(
          FOREIGN_KEY_VIOLATION,
          write(
            `INSERT INTO ${table} (${owner}, user_id, access_level) VALUES ($1, $2, $3)
             ON CONFLICT (${owner}, user_id) DO UPDATE SET access_level = EXCLUDED.access_level`,
            [id, userId, accessLevel],
          ),
          { [`${table}_${owner}_fkey`]: () => refusal.unknownMember(owner, id), [`${table}_user_id_fkey`]: () => refusal.unknownMember('user_id', userId) },
        );
      },
    },

    applications: {
      async byId(id) {
        if (!isId(id)) return undefined;
        const row = await applicationById({ key: String(id), id });
        return row && applicationOf(row);
      },
      async byUid(uid) {
        if (!isText(uid)) return undefined;
        const row = await applicationByUid({ key: uid });
        return row && applicationOf(row);
      },
      async ownedBy(ownerId) {
        if (!isId(ownerId)) return [];
        const { rows } = await pool.query<ApplicationRow>(`SELECT ${applicationColumns} FROM applications WHERE owner_id = $1 ORDER BY id`, [ownerId]);
        return rows.map(applicationOf);
      },
      create(application) {
        return observed(() => insertApplication(pool, application));
      },
      async deleteOwned(ownerId, id, now) {
        if (!isId(ownerId) || !isId(id)) return false;
        return inTransaction(async (client) => {
          // Its authorization codes go with it (ON DELETE CASCADE), after any redemption in flight has committed.
          const deleted = await client.query('DELETE FROM applications WHERE id = $1 AND owner_id = $2', [id, ownerId]);
          if (deleted.rowCount === 0) return false;
          await revokeTwice(client, 'UPDATE access_tokens SET revoked_at = $2 WHERE application_id = $1 AND revoked_at IS NULL', [id, at(now)]);
          return true;
        });
      },
    },

    personalAccessTokens: {
      async withUserByDigest(tokenDigest) {
        if (!isText(tokenDigest)) return undefined;
        // row_to_json writes the expiry date as the day itself (ISO 8601), as personalAccessTokenColumns does.
        const row = await personalAccessTokenByDigest({ key: tokenDigest });
        return row && { token: personalAccessTokenOf(row.found.credential), ...accountOf(row.found) };
      },
      async ofUser(userId) {
        if (!isId(userId)) return [];
        const { rows } = await pool.query<PersonalAccessTokenRow>(`SELECT ${personalAccessTokenColumns} FROM personal_access_tokens WHERE user_id = $1 ORDER BY id DESC`, [userId]);
        return rows.map(personalAccessTokenOf);
      },
      create(token) {
        return observed(() => insertPersonalAccessToken(pool, token));
      },
      async revokeOwned(userId, id) {
        if (!isId(userId) || !isId(id)) return null;
        const { rows } = await write<PersonalAccessTokenRow>(`UPDATE personal_access_tokens SET revoked = true WHERE id = $1 AND user_id = $2 RETURNING ${personalAccessTokenColumns}`, [id, userId]);
        return rows[0] ? personalAccessTokenOf(rows[0]) : null;
      },
    },

    codes: {
      async create(code: AuthorizationCodeRecord) {
        await write(
          `INSERT INTO authorization_codes (id, code_digest, application_id, user_id, redirect_uri, scopes, code_challenge, code_challenge_method, created_at, expires_at, used_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
          [
            code.id,
            code.code_digest,
            code.application_id,
            code.user_id,
            code.redirect_uri,
            [...code.scopes],
            code.code_challenge,
            code.code_challenge_method,
            at(code.created_at),
            at(code.expires_at),
            code.used_at === null ? null : at(code.used_at),
          ],
        );
      },
    },

    tokens: {
      async issue(pair: NewTokenPair) {
        await write(
          `INSERT INTO access_tokens (id, token_digest, refresh_digest, application_id, user_id, scopes, created_at, expires_in, code_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL)`,
          [pair.id, pair.token_digest, pair.refresh_digest, pair.application_id, pair.user_id, [...pair.scopes], at(pair.now), pair.ttl],
        );
      },
      async withUserByAccessDigest(tokenDigest) {
        if (!isText(tokenDigest)) return undefined;
        const row = await accessTokenByDigest({ key: tokenDigest });
        return row && { token: accessTokenOf(row.found.credential), ...accountOf(row.found) };
      },
      async byAccessDigest(tokenDigest) {
        if (!isText(tokenDigest)) return undefined;
        const row = await tokenByAccessDigest({ key: tokenDigest });
        return row && accessTokenOf(row);
      },
      async byRefreshDigest(refreshDigest) {
        if (!isText(refreshDigest)) return undefined;
        const row = await tokenByRefreshDigest({ key: refreshDigest });
        return row && accessTokenOf(row);
      },
      async revoke(id, now) {
        if (!isText(id)) return;
        await write('UPDATE access_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [id, at(now)]);
      },
      async unrevokedOfUser(userId) {
        if (!isId(userId)) return [];
        // Pair ids are random, so the order of issue is the issue time (a tie within one second is broken by id).
        const { rows } = await pool.query<AccessTokenRow>(`SELECT ${accessTokenColumns} FROM access_tokens WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at, id`, [userId]);
        return rows.map(accessTokenOf);
      },
      async revokeAuthorization(userId, applicationId, now) {
        if (!isId(userId) || (applicationId !== null && !isId(applicationId))) return false;
        return inTransaction(async (client) => {
          // Codes first: deleting one waits for a redemption of it in flight, whose pair the revocation then sees.
          const codes = await client.query<{ pending: boolean }>(
            'DELETE FROM authorization_codes WHERE user_id = $1 AND application_id = $2 RETURNING used_at IS NULL AND expires_at > $3 AS pending',
            [userId, applicationId, at(now)],
          );
          const revoked = await revokeTwice(
            client,
            'UPDATE access_tokens SET revoked_at = $3 WHERE user_id = $1 AND application_id IS NOT DISTINCT FROM $2::bigint AND revoked_at IS NULL',
            [userId, applicationId, at(now)],
          );
          return revoked > 0 || codes.rows.some((code) => code.pending);
        });
      },
    },

    grants: postgresGrantStorage(pool),
    notificationSettings: postgresNotificationSettingsStorage(pool),
    sessions: postgresSessionStorage(pool),

    recipients: {
      async audience(projectId, userIds) {
        const project = await projectById(projectId);
        if (!project) return undefined;
        const groupId = project.group_id;
        const { rows: interestedRows } = await pool.query<{ user_id: string }>(
          `SELECT user_id FROM project_members WHERE project_id = $1
           UNION SELECT user_id FROM group_members WHERE group_id = $2
           UNION SELECT user_id FROM notification_settings
                 WHERE (source_type = 'project' AND source_id = $1) OR (source_type = 'group' AND source_id = $2)`,
          [project.id, groupId],
        );
        const interested = interestedRows.map((row) => Number(row.user_id));
        const ids = [...new Set([...interested, ...userIds.filter(isId)])];
        const [users, settings] = await Promise.all([
          pool.query<UserRow & { direct: number | null; inherited: number | null }>(
            `SELECT ${userColumns}, project_members.access_level AS direct, group_members.access_level AS inherited
             FROM users
             LEFT JOIN project_members ON project_members.project_id = $2 AND project_members.user_id = users.id
             LEFT JOIN group_members ON group_members.group_id = $3 AND group_members.user_id = users.id
             WHERE users.id = ANY ($1::bigint[])`,
            [ids, project.id, groupId],
          ),
          pool.query<SettingRow>(
            `SELECT user_id, source_type, source_id, level, notification_email, events FROM notification_settings
             WHERE user_id = ANY ($1::bigint[])
               AND (source_type = 'global' OR (source_type = 'project' AND source_id = $2) OR (source_type = 'group' AND source_id = $3))`,
            [ids, project.id, groupId],
          ),
        ]);
        const settingsOf = new Map<number, AudienceMember['settings']>();
        for (const row of settings.rows) {
          const setting = settingOf(row);
          const own = settingsOf.get(setting.user_id) ?? {};
          own[setting.source_type] = setting;
          settingsOf.set(setting.user_id, own);
        }
        const members: Audience['members'] = new Map();
        for (const row of users.rows) {
          const user = userOf(row);
          members.set(user.id, { user, access: { direct: row.direct, inherited: row.inherited }, settings: settingsOf.get(user.id) ?? {} });
        }
        return { project, interested, members };
      },
    },

    mail: {
      async recordEvent(event, messages) {
        await inTransaction(async (client) => {
          await client.query('INSERT INTO notification_events (id, kind, project_id, author_id, title, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
            event.id,
            event.kind,
            event.project_id,
            event.author_id,
            event.title,
            at(event.created_at),
          ]);
          for (const m of messages) {
            await client.query(
              `INSERT INTO outbox_messages (id, event_id, user_id, recipient, subject, body, headers, next_attempt_at, created_at)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
              [m.id, m.event_id, m.user_id, m.to, m.subject, m.text, JSON.stringify(m.headers), at(m.next_attempt_at), at(m.created_at)],
            );
          }
        });
      },
      async claimDue(now, limit, leaseSeconds) {
        // SKIP LOCKED: instances claiming at the same moment each take messages the others did not.
        const { rows } = await write<OutboxRow>(
          `UPDATE outbox_messages SET claimed_until = $2, attempts = attempts + 1
           WHERE id IN (
             SELECT id FROM outbox_messages
             WHERE status = 'queued' AND next_attempt_at <= $1 AND (claimed_until IS NULL OR claimed_until < $1)
             ORDER BY next_attempt_at, created_at LIMIT $3 FOR UPDATE SKIP LOCKED)
           RETURNING ${outboxColumns}`,
          [at(now), at(now + leaseSeconds), limit],
        );
        return rows.map(outboxOf);
      },
      async markSent(id, now) {
        await write(`UPDATE outbox_messages SET status = 'sent', sent_at = $2, claimed_until = NULL, last_error = NULL WHERE id = $1`, [id, at(now)]);
      },
      async markRetry(id, nextAttemptAt, error) {
        await write('UPDATE outbox_messages SET next_attempt_at = $2, claimed_until = NULL, last_error = $3 WHERE id = $1', [id, at(nextAttemptAt), error]);
      },
      async markFailed(id, error) {
        await write(`UPDATE outbox_messages SET status = 'failed', claimed_until = NULL, last_error = $2 WHERE id = $1`, [id, error]);
      },
      async recent({ limit, userId, eventId }) {
        if (userId !== undefined && !isId(userId)) return [];
        const { rows } = await pool.query<OutboxRow>(
          `SELECT ${outboxColumns} FROM outbox_messages
           WHERE ($2::bigint IS NULL OR user_id = $2) AND ($3::text IS NULL OR event_id = $3)
           ORDER BY seq DESC LIMIT $1`,
          [limit, userId ?? null, eventId ?? null],
        );
        return rows.map(outboxOf);
      },
    },

    maintenance: {
      instanceSecret(name) {
        return instanceSecret(pool, name);
      },
      prune(now) {
        return pruneExpired(pool, now);
      },
      async readiness() {
        if (closing) return { ready: false, problem: 'the store is closed' };
        try {
          // A standby, or a database whose transactions are read-only by default, answers but takes no writes.
          const { rows } = await pool.query<{ writable: boolean }>(`SELECT current_setting('transaction_read_only') = 'off' AS writable`);
          return rows[0]!.writable ? { ready: true } : { ready: false, problem: 'the database takes no writes (it is read-only)' };
        } catch (error) {
          return { ready: false, problem: `the database cannot be reached: ${withoutCredentials((error as Error).message)}` };
        }
      },
      async existingNames(query) {
        const [usernames, emails, groupPaths, projectPaths, clientIds, tokenDigests] = await Promise.all([
          found(pool, query.usernames, 'SELECT asked.name, users.username AS stored FROM unnest($1::text[]) AS asked (name) JOIN users ON lower(users.username) = lower(asked.name)'),
          // user_emails holds every address, primary and secondary.
          found(pool, query.emails, 'SELECT asked.name, user_emails.email AS stored FROM unnest($1::text[]) AS asked (name) JOIN user_emails ON lower(user_emails.email) = lower(asked.name)'),
          found(pool, query.groupPaths, 'SELECT asked.name, groups.path AS stored FROM unnest($1::text[]) AS asked (name) JOIN groups ON lower(groups.path) = lower(asked.name)'),
          found(
            pool,
            query.projectPaths,
            `SELECT asked.name, projects.namespace || '/' || projects.path AS stored FROM unnest($1::text[]) AS asked (name)
             JOIN projects ON lower(projects.namespace || '/' || projects.path) = lower(asked.name)`,
          ),
          found(pool, query.clientIds, 'SELECT asked.name, applications.uid AS stored FROM unnest($1::text[]) AS asked (name) JOIN applications ON applications.uid = asked.name'),
          found(
            pool,
            query.tokenDigests,
            'SELECT asked.name, personal_access_tokens.token_digest AS stored FROM unnest($1::text[]) AS asked (name) JOIN personal_access_tokens ON personal_access_tokens.token_digest = asked.name',
          ),
        ]);
        return { usernames, emails, groupPaths, projectPaths, clientIds, tokenDigests } satisfies FoundNames;
      },
      async applySeed(rows: SeedRows) {
        await inTransaction(async (client) => {
          // Every name's lock up front, in one order: two seeds sharing names then wait for each other, never deadlock.
          const names = [...new Set([...rows.users.map((u) => u.user.username), ...rows.groups.map((g) => g.group.path)].map((name) => name.toLowerCase()))].sort();
          if (names.length > 0) await client.query('SELECT count(pg_advisory_xact_lock(hashtextextended(lower(name), $2))) FROM unnest($1::text[]) AS name', [names, nameLock]);
          for (const { user, tokens } of rows.users) {
            const record = await insertUser(client, user, 'seed');
            for (const token of tokens) await insertPersonalAccessToken(client, { ...token, user_id: record.id });
          }
          const userId = await userIdsByName(client, [
            ...rows.groups.flatMap((g) => g.members.map((m) => m.username)),
            ...rows.projects.flatMap((p) => p.members.map((m) => m.username)),
            ...rows.applications.map((a) => a.owner),
          ]);
          const members = (list: SeedRows['groups'][number]['members']) => list.map((m) => ({ user_id: userId(m.username), access_level: m.access_level }));
          for (const { group, members: list } of rows.groups) await insertGroup(client, group, members(list), 'seed');
          for (const { project, members: list } of rows.projects) await insertProject(client, project, members(list), 'seed');
          for (const { owner, application } of rows.applications) await insertApplication(client, { ...application, owner_id: userId(owner) });
        });
      },
      async snapshot() {
        return null;
      },
      async restore() {
        throw new Error('a store on PostgreSQL cannot restore a snapshot: every instance on the database shares its state');
      },
      observeWrites(observe) {
        observer = observe;
      },
      close() {
        // Idempotent, as the file store's: ending a pool twice is an error.
        closing ??= pool.end();
        return closing;
      },
      describe() {
        return options.describe ?? 'PostgreSQL';
      },
    },
  };
}
