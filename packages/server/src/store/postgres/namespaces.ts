// Groups, projects and their members (domain/storage/namespaces.ts) on PostgreSQL. Every API call on a project or
// group asks for it with the caller's standing on it, so that is one batched lookup (lookups.ts) answering both.
import type pg from 'pg';
import { refusal, type GroupAccess, type NamespaceRef, type NamespaceStorage, type Project, type ProjectAccess } from '../../domain/storage/index.js';
import type { Ask } from './batch.js';
import { insertGroup, insertProject } from './inserts.js';
import { eachAsk, lookup, one } from './lookups.js';
import { FOREIGN_KEY_VIOLATION, refusing } from './refusals.js';
import { groupColumns, groupOf, type GroupRow, isId, isText, projectColumns, projectOf, type ProjectRow } from './rows.js';
import { statement } from './statements.js';
import type { Writes } from './writes.js';

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

const prefixed = (columns: string, alias: string) => columns.split(', ').map((column) => `${alias}.${column}`).join(', ');
/** `$2` (null for any) in the name or path of `alias`, whatever the case; strpos, so `%` and `_` are no wildcards. */
const searched = (alias: string) => `($2::text IS NULL OR strpos(lower(${alias}.name), lower($2)) > 0 OR strpos(lower(${alias}.path), lower($2)) > 0)`;

/**
 * Groups or projects (`table`, aliased `alias`, read as `columns`) each with a user's standing, for the asks `q`
 * (askedRows: a key, an id or a path matched lower-cased by `path`, and a user), each looked up on its own.
 */
function namespaceLookups(table: 'groups' | 'projects', alias: 'g' | 'p', columns: string, standing: (user: string) => string, path: string) {
  const select = `${prefixed(columns, alias)}, ${standing('q.user_id')}`;
  return { byId: eachAsk(select, `${table} ${alias}`, `${alias}.id = q.id`), byPath: eachAsk(select, `${table} ${alias}`, `${path} = lower(q.path)`) };
}
const projectLookups = namespaceLookups('projects', 'p', projectColumns, projectStanding, `lower(p.namespace || '/' || p.path)`);
const groupLookups = namespaceLookups('groups', 'g', groupColumns, groupStanding, 'lower(g.path)');

type NamespaceAsk = Ask & { value: number | string; userId: number };
/** The batched lookups of `lookups` (by id and by path), as one finder of a group or project with a user's standing. */
function namespaceFinder<R extends Ask>(pool: pg.Pool, lookups: { byId: (asked: string) => string; byPath: (asked: string) => string }) {
  const values = (ask: NamespaceAsk) => [ask.key, ask.value, ask.userId];
  const findById = lookup<NamespaceAsk, R>(pool, lookups.byId, ['key', 'id', 'user_id'], ['text', 'bigint', 'bigint'], values);
  const findByPath = lookup<NamespaceAsk, R>(pool, lookups.byPath, ['key', 'path', 'user_id'], ['text', 'text', 'bigint'], values);
  /** The group or project `ref` names, with the standing of user `userId`. */
  return (ref: NamespaceRef, userId: number): Promise<R | undefined> => {
    if ('id' in ref ? !isId(ref.id) : !isText(ref.path)) return Promise.resolve(undefined);
    return 'id' in ref ? findById({ key: `${userId}:${ref.id}`, value: ref.id, userId }) : findByPath({ key: `${userId}:${ref.path}`, value: ref.path, userId });
  };
}

/** The lists' questions: every group or project with a user's standing, `$2` searched in its name or path. */
function namespaceLists(pool: pg.Pool): Pick<NamespaceStorage, 'groupsWithAccess' | 'projectsWithAccess'> {
  return {
    async groupsWithAccess(userId, search) {
      if (!isId(userId)) return [];
      const { rows } = await pool.query<GroupRow & AccessRow>(
        statement(`SELECT ${prefixed(groupColumns, 'g')}, ${groupStanding('$1')} FROM groups g WHERE ${searched('g')} ORDER BY g.id`, [userId, search ?? null]),
      );
      return rows.map((row) => ({ group: groupOf(row), access: groupAccessOf(row) }));
    },
    async projectsWithAccess(userId, search) {
      if (!isId(userId)) return [];
      const { rows } = await pool.query<ProjectRow & AccessRow>(
        statement(`SELECT ${prefixed(projectColumns, 'p')}, ${projectStanding('$1')} FROM projects p WHERE ${searched('p')} ORDER BY p.id`, [userId, search ?? null]),
      );
      return rows.map((row) => ({ project: projectOf(row), access: projectAccessOf(row) }));
    },
  };
}

export function postgresNamespaceStorage(pool: pg.Pool, { inTransaction, write }: Writes): NamespaceStorage {
  const projectWithAccess = namespaceFinder<ProjectRow & AccessRow & Ask>(pool, projectLookups);
  const groupWithAccess = namespaceFinder<GroupRow & AccessRow & Ask>(pool, groupLookups);
  async function projectById(id: number): Promise<Project | undefined> {
    if (!isId(id)) return undefined;
    return one(pool, `SELECT ${projectColumns} FROM projects WHERE id = $1`, [id], projectOf);
  }

  return {
    async groupById(id) {
      if (!isId(id)) return undefined;
      return one(pool, `SELECT ${groupColumns} FROM groups WHERE id = $1`, [id], groupOf);
    },
    async groupByPath(path) {
      if (!isText(path)) return undefined;
      return one(pool, `SELECT ${groupColumns} FROM groups WHERE lower(path) = lower($1)`, [path], groupOf);
    },
    projectById,
    async projectByFullPath(fullPath) {
      if (!isText(fullPath)) return undefined;
      return one(pool, `SELECT ${projectColumns} FROM projects WHERE lower(namespace || '/' || path) = lower($1)`, [fullPath], projectOf);
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
    ...namespaceLists(pool),
    async groupMembershipsOf(userId) {
      if (!isId(userId)) return [];
      const { rows } = await pool.query<{ path: string; access_level: number }>(
        'SELECT g.path, m.access_level FROM group_members m JOIN groups g ON g.id = m.group_id WHERE m.user_id = $1 ORDER BY g.id',
        [userId],
      );
      return rows;
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
  };
}
