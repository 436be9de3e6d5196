// Seeding on PostgreSQL (domain/storage/maintenance.ts): which of a fixture's names the database has already, and a
// checked fixture applied in one transaction, through the same inserts as each aggregate's create (inserts.ts), so a
// seed is refused as a create would be, in the seed's own wording where it has one.
import type pg from 'pg';
import { nameKeys, refusal, type FoundNames, type NameQuery, type SeedRows } from '../../domain/storage/index.js';
import { insertApplication, insertGroup, insertPersonalAccessToken, insertProject, insertUser, nameLock } from './inserts.js';
import { isText } from './rows.js';

/** The ids of users named in a seed, by the name as written; a name no user has is an error. */
async function userIdsByName(client: pg.PoolClient, names: readonly string[]): Promise<(name: string) => number> {
  const { rows } = await client.query<{ name: string; id: string }>(
    'SELECT asked.name, users.id FROM unnest($1::text[]) AS asked (name) JOIN users ON lower(users.username) = lower(asked.name)',
    [[...new Set(names)]],
  );
  const ids = new Map(rows.map((row) => [row.name, Number(row.id)]));
  return (name) => {
    const id = ids.get(name);
    if (id === undefined) throw refusal.unknownSeedUser(name);
    return id;
  };
}

/** Of the names of `kind` asked, those a query finds, each by its key (nameKeys); `sql` joins `asked (name)` to the table. */
async function found(db: pg.Pool, query: NameQuery, kind: keyof NameQuery, sql: string): Promise<Map<string, string>> {
  const map = new Map<string, string>();
  const asked = query[kind].filter(isText);
  if (asked.length === 0) return map;
  const { rows } = await db.query<{ name: string; stored: string }>(sql, [asked]);
  for (const row of rows) map.set(nameKeys[kind](row.name), row.stored);
  return map;
}

/** Of the names `query` asks, those the database has (FoundNames). */
export async function existingNames(pool: pg.Pool, query: NameQuery): Promise<FoundNames> {
  const [usernames, emails, groupPaths, projectPaths, clientIds, tokenDigests] = await Promise.all([
    found(pool, query, 'usernames', 'SELECT asked.name, users.username AS stored FROM unnest($1::text[]) AS asked (name) JOIN users ON lower(users.username) = lower(asked.name)'),
    // user_emails holds every address, primary and secondary.
    found(pool, query, 'emails', 'SELECT asked.name, user_emails.email AS stored FROM unnest($1::text[]) AS asked (name) JOIN user_emails ON lower(user_emails.email) = lower(asked.name)'),
    found(pool, query, 'groupPaths', 'SELECT asked.name, groups.path AS stored FROM unnest($1::text[]) AS asked (name) JOIN groups ON lower(groups.path) = lower(asked.name)'),
    found(
      pool,
      query,
      'projectPaths',
      `SELECT asked.name, projects.namespace || '/' || projects.path AS stored FROM unnest($1::text[]) AS asked (name)
       JOIN projects ON lower(projects.namespace || '/' || projects.path) = lower(asked.name)`,
    ),
    found(pool, query, 'clientIds', 'SELECT asked.name, applications.uid AS stored FROM unnest($1::text[]) AS asked (name) JOIN applications ON applications.uid = asked.name'),
    found(
      pool,
      query,
      'tokenDigests',
      'SELECT asked.name, personal_access_tokens.token_digest AS stored FROM unnest($1::text[]) AS asked (name) JOIN personal_access_tokens ON personal_access_tokens.token_digest = asked.name',
    ),
  ]);
  return { usernames, emails, groupPaths, projectPaths, clientIds, tokenDigests } satisfies FoundNames;
}

/** Applies the seed in the transaction of `client`: all of it, or (a name taken meanwhile) none. */
export async function applySeed(client: pg.PoolClient, rows: SeedRows): Promise<void> {
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
}
