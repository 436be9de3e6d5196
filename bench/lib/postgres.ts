// The benchmark's stores in PostgreSQL: the same generated StoreData the file server reads, copied into a migrated
// database table by table (one json_populate_recordset per table, so 100k rows take a second, not a minute).
// The cluster is moved between cores with its backends, for the rows that put it on the servers' core.
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import type { StoreData } from '../../packages/server/src/store/file/schema.js';
import { migrate } from '../../packages/server/src/store/postgres/migrate.js';
import { type TestCluster, createDatabase } from '../../test/support/postgres.js';
import { pinWithChildren, pinning } from './processes.js';

const iso = (seconds: number | null) => (seconds === null ? null : new Date(seconds * 1000).toISOString());

export async function copyStoreIntoDatabase(storeFile: string, url: string): Promise<void> {
  const data = JSON.parse(await readFile(storeFile, 'utf8')) as StoreData;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const insert = (table: string, records: object[]) =>
    records.length === 0
      ? Promise.resolve()
      : client.query(`INSERT INTO ${table} SELECT * FROM json_populate_recordset(NULL::${table}, $1::json)`, [JSON.stringify(records)]);
  try {
    await client.query('BEGIN');
    await insert('users', data.users.map((u) => ({ id: u.id, username: u.username, email: u.email, name: u.name, password_hash: u.password_hash, two_factor_enabled: u.two_factor_enabled, otp_secret: null, otp_last_step: null, state: u.state, is_admin: u.is_admin, bio: u.bio, created_at: iso(u.created_at) })));
    await insert('groups', data.groups.map((g) => ({ id: g.id, path: g.path, name: g.name, visibility: g.visibility, created_at: iso(g.created_at) })));
    await insert('group_members', data.groups.flatMap((g) => g.members.map((m) => ({ group_id: g.id, ...m }))));
    await insert('projects', data.projects.map((p) => ({ id: p.id, namespace: p.namespace, path: p.path, name: p.name, visibility: p.visibility, group_id: p.group_id, created_at: iso(p.created_at) })));
    await insert('project_members', data.projects.flatMap((p) => p.members.map((m) => ({ project_id: p.id, ...m }))));
    await insert('applications', data.applications.map((a) => ({ id: a.id, uid: a.uid, secret_digest: a.secret_digest, confidential: a.confidential !== false, name: a.name, redirect_uris: a.redirect_uris, scopes: a.scopes, owner_id: a.owner_id, created_at: iso(a.created_at) })));
    await insert('authorization_codes', data.authorization_codes.map((c) => ({ id: c.id, code_digest: c.code_digest, application_id: c.application_id, user_id: c.user_id, redirect_uri: c.redirect_uri, scopes: c.scopes, code_challenge: c.code_challenge, code_challenge_method: c.code_challenge_method, created_at: iso(c.created_at), expires_at: iso(c.expires_at), used_at: iso(c.used_at) })));
    await insert('access_tokens', data.access_tokens.map((t) => ({ id: t.id, token_digest: t.token_digest, refresh_digest: t.refresh_digest, application_id: t.application_id, user_id: t.user_id, scopes: t.scopes, created_at: iso(t.created_at), expires_in: t.expires_in, revoked_at: iso(t.revoked_at), code_id: t.code_id })));
    // Ids were given, so the identity sequences continue after them.
    for (const table of ['users', 'groups', 'projects', 'applications']) {
      await client.query(`SELECT setval(pg_get_serial_sequence('${table}', 'id'), coalesce((SELECT max(id) FROM ${table}), 0) + 1, false)`);
    }
    await client.query('COMMIT');
    await client.query('ANALYZE');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
}

/** A fresh, migrated database in `cluster` holding the store in `storeFile`; its URL. */
export async function storeDatabase(cluster: TestCluster, storeFile: string): Promise<string> {
  const database = await createDatabase(cluster.url);
  await migrate(database.url);
  await copyStoreIntoDatabase(storeFile, database.url);
  return database.url;
}

/** Moves the cluster (postmaster and backends) to the cores a variant asks for. */
export const placeCluster = (cluster: TestCluster, cores: 'all' | 'servers') => pinning && pinWithChildren(pinning[cores], cluster.pid);
