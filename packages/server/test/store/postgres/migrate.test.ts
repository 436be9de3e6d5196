// The PostgreSQL schema's migrations against a real PostgreSQL (the run's throwaway cluster): applied once even when
// several instances migrate at once, a no-op when current, refused on a schema newer than the code, and the unique
// indexes the domain relies on (digests; usernames, e-mails and paths whatever their case).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { appliedMigrations, knownMigrations, migrate, migrationsTable } from '../../../src/store/postgres/migrate.js';
import { createDatabase } from '../../../../../test/support/postgres.js';

const run = promisify(execFile);
const cli = inject('serverCli');
const drops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const drop of drops.splice(0)) await drop();
});

async function database(): Promise<string> {
  const { url, drop } = await createDatabase(inject('postgresUrl'));
  drops.push(drop);
  return url;
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

describe('migrate', () => {
  it('applies every migration to an empty database, then has nothing to do', async () => {
    const url = await database();
    expect((await migrate(url)).applied).toEqual(knownMigrations());
    expect((await migrate(url)).applied).toEqual([]);
    const client = new pg.Client(url);
    await client.connect();
    expect(await appliedMigrations(client)).toEqual(knownMigrations());
    await client.end();
  });

  it('applies each migration once when eight instances migrate at the same moment', async () => {
    const url = await database();
    const results = await Promise.all(Array.from({ length: 8 }, () => migrate(url)));
    expect(results.flatMap((r) => r.applied)).toEqual(knownMigrations());
    expect(await query(url, `SELECT name FROM ${migrationsTable}`)).toHaveLength(knownMigrations().length);
  });

  it('refuses a database whose schema is newer than the code, changing nothing', async () => {
    const url = await database();
    await migrate(url);
    await query(url, `INSERT INTO ${migrationsTable} (name, run_on) VALUES ('9999_from_the_future', now())`);
    await expect(migrate(url)).rejects.toThrow(/schema is newer than this tokenbell \(it has migration 9999_from_the_future/);
  });

  it('enforces the unique indexes the domain relies on', async () => {
    const url = await database();
    await migrate(url);
    await query(url, `INSERT INTO users (username, email, name, password_hash) VALUES ('jsmith', 'jsmith@example.com', 'J', 'scrypt$x')`);
    await expect(query(url, `INSERT INTO users (username, email, name, password_hash) VALUES ('JSmith', 'other@example.com', 'J', 'scrypt$x')`)).rejects.toThrow(/users_username_key/);
    await expect(query(url, `INSERT INTO users (username, email, name, password_hash) VALUES ('other', 'JSMITH@example.com', 'J', 'scrypt$x')`)).rejects.toThrow(/users_email_key/);
    await query(url, `INSERT INTO groups (path, name, visibility) VALUES ('acme', 'Acme', 'private')`);
    await query(url, `INSERT INTO projects (namespace, path, name, visibility) VALUES ('acme', 'widgets', 'W', 'private')`);
    await expect(query(url, `INSERT INTO projects (namespace, path, name, visibility) VALUES ('ACME', 'Widgets', 'W', 'private')`)).rejects.toThrow(/projects_full_path_key/);
    await query(url, `INSERT INTO personal_access_tokens (user_id, name, token_digest, scopes) VALUES (1, 'a', 'd1', '{api}')`);
    await expect(query(url, `INSERT INTO personal_access_tokens (user_id, name, token_digest, scopes) VALUES (1, 'b', 'd1', '{api}')`)).rejects.toThrow(/unique/);
    // A public client has no secret digest, and a confidential one must have one.
    await expect(query(url, `INSERT INTO applications (uid, secret_digest, confidential, name, redirect_uris, scopes, owner_id) VALUES ('a', NULL, true, 'A', '{}', '{api}', 1)`)).rejects.toThrow(/check/);
    await query(url, `INSERT INTO notification_settings (user_id, source_type, source_id, level, events) VALUES (1, 'global', NULL, 'watch', '{}')`);
    await expect(query(url, `INSERT INTO notification_settings (user_id, source_type, source_id, level, events) VALUES (1, 'global', NULL, 'mention', '{}')`)).rejects.toThrow(/notification_settings_key/);
  });
});

describe('tokenbell migrate', () => {
  const tokenbell = (args: string[], env: Record<string, string> = {}) =>
    run(process.execPath, [cli, 'migrate', ...args], { env: { ...process.env, ...env } }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
    );

  it('migrates the database named by --database-url or DATABASE_URL, and says what it did', async () => {
    const url = await database();
    const first = await tokenbell(['--database-url', url]);
    expect(first).toMatchObject({ code: 0, stdout: `applied ${knownMigrations().length} migration(s): ${knownMigrations().join(', ')}\n` });
    expect(await tokenbell([], { DATABASE_URL: url })).toMatchObject({ code: 0, stdout: 'the database schema is current; nothing to do\n' });
  });

  it('answers an unreachable database or a missing URL with one line naming the flag', async () => {
    const unreachable = await tokenbell(['--database-url', 'postgres://nobody@127.0.0.1:1/none']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^tokenbell: cannot connect to the database \(--database-url\): .*ECONNREFUSED.*\n$/);
    const missing = await tokenbell([], { DATABASE_URL: '' });
    expect(missing.code).toBe(1);
    expect(missing.stderr.split('\n')[0]).toBe('tokenbell: migrate needs --database-url (or DATABASE_URL)');
  });
});
