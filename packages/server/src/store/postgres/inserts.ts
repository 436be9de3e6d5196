// The inserts that create a user, a group, a project, an application or a personal access token, shared by the
// aggregates' create and by a seed, which adds the same rows in one transaction. Unique names are the unique
// indexes' job (refusals.ts). The one rule no index can hold, that a username is never a group's path and the other
// way round, is kept by a transaction advisory lock on the lower-cased name, taken by whoever creates either.
import type pg from 'pg';
import {
  refusal,
  type ApplicationRecord,
  type Group,
  type Membership,
  type NewApplicationRow,
  type NewGroupRow,
  type NewPersonalAccessTokenRow,
  type NewProjectRow,
  type NewUserRow,
  type PersonalAccessTokenRecord,
  type Project,
  type UserRecord,
} from '../../domain/storage/index.js';
import { refusingTaken, type Wording } from './refusals.js';
import {
  applicationColumns,
  applicationOf,
  type ApplicationRow,
  at,
  groupColumns,
  groupOf,
  type GroupRow,
  personalAccessTokenColumns,
  personalAccessTokenOf,
  type PersonalAccessTokenRow,
  projectColumns,
  projectOf,
  type ProjectRow,
  userColumns,
  userOf,
  type UserRow,
} from './rows.js';

type Queryable = pg.Pool | pg.PoolClient;

/** The advisory lock space of user and group names (an arbitrary constant of tokenbell's, the seed of the hash). */
export const nameLock = 0x6e_61_6d_65;

/** Held until the transaction ends: whoever creates a user or a group of this name, whatever its case, waits. */
const lockName = (client: pg.PoolClient, name: string) => client.query('SELECT pg_advisory_xact_lock(hashtextextended(lower($1), $2))', [name, nameLock]);

export async function insertUser(client: pg.PoolClient, user: NewUserRow, wording: Wording): Promise<UserRecord> {
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

export async function insertGroup(client: pg.PoolClient, group: NewGroupRow, members: readonly Membership[], wording: Wording): Promise<Group> {
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

export async function insertProject(client: pg.PoolClient, { namespace, ...project }: NewProjectRow, members: readonly Membership[], wording: Wording): Promise<Project> {
  // Names never change and neither users nor groups are deleted, so the namespace found stays valid without a lock.
  const { rows: owners } = await client.query<{ namespace: string; group_id: string | null }>(
    `SELECT path AS namespace, id AS group_id FROM groups WHERE lower(path) = lower($1)
     UNION ALL
     SELECT username, NULL FROM users WHERE lower(username) = lower($1)`,
    [namespace],
  );
  const owner = owners.find((o) => o.group_id !== null) ?? owners[0];
  if (!owner) throw refusal.unknownNamespace(namespace);
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

export async function insertApplication(db: Queryable, application: NewApplicationRow): Promise<ApplicationRecord> {
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

export async function insertPersonalAccessToken(db: Queryable, token: NewPersonalAccessTokenRow): Promise<PersonalAccessTokenRecord> {
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
