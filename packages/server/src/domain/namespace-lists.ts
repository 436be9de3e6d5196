// The service's lists of groups and projects (`GET /groups`, `GET /projects`) and its membership look-ups
// (`members/all/:user_id`), which apps that sign in with the service call to check a user's groups (Grafana's
// allowed_groups, oauth2-proxy's --gitlab-group and --gitlab-project). What a user may see is decided by
// visibility.ts alone; this module adds the lists' own filters and order, as the service's finders apply them.
import type { components, operations } from '@tokenbell/sdk';
import type { Group, NamespaceStorage, Project, UserStorage } from './storage/index.js';
import { presentUser } from './users.js';
import type { UserRecord } from './storage/records.js';
import { canSeeGroupWith, canSeeProjectWith, ownsNamespaceOf, projectAccessLevel, visibleGroup, visibleProject } from './visibility.js';

/** The owner's access level (the service's `Gitlab::Access::OWNER`). */
const OWNER = 50;

type DocumentQuery<Op extends 'listGroups' | 'listProjects'> = NonNullable<operations[Op]['parameters']['query']>;
/** A list's query as the document states it, its yes-or-no filters read as booleans (http/query-flags.ts). */
type WithFlags<Q> = { [K in keyof Q]: components['schemas']['QueryFlag'] extends NonNullable<Q[K]> ? boolean : Q[K] };
export type GroupListQuery = WithFlags<DocumentQuery<'listGroups'>>;
export type ProjectListQuery = WithFlags<DocumentQuery<'listProjects'>>;
type SortOrder = NonNullable<GroupListQuery['sort']>;

/** Orders by `key`, then by id, as the service's `order_by` does (ties never change place between pages). */
function ordered<T extends { id: number }>(items: T[], key: (item: T) => string | number, sort: SortOrder): T[] {
  const sign = sort === 'asc' ? 1 : -1;
  return items.sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    const byKey = typeof x === 'string' && typeof y === 'string' ? x.localeCompare(y, 'en', { sensitivity: 'base' }) : Number(x) - Number(y);
    return sign * (byKey !== 0 ? byKey : a.id - b.id);
  });
}

/**
 * The groups the list answers, in order: the groups the user may see and, unless `all_available` or the user is an
 * administrator, only those they belong to (a membership of the group or of one of its projects, the service's
 * "authorized groups"). `similarity` orders by name, since no search ranks them here.
 */
export async function listGroups(namespaces: NamespaceStorage, user: UserRecord, query: GroupListQuery): Promise<Group[]> {
  const allAvailable = query.all_available ?? user.is_admin;
  const rows = (await namespaces.groupsWithAccess(user.id, query.search)).filter(({ group, access }) => {
    if (!canSeeGroupWith(user, group, access)) return false;
    const member = access.direct !== null || access.inAProject;
    if (!allAvailable && !member) return false;
    if (query.min_access_level !== undefined && (access.direct ?? 0) < query.min_access_level) return false;
    return !query.owned || access.direct === OWNER;
  });
  const key = query.order_by === 'path' ? (g: Group) => g.path : query.order_by === 'id' ? (g: Group) => g.id : (g: Group) => g.name;
  return ordered(
    rows.map((r) => r.group),
    key,
    query.sort ?? 'asc',
  );
}

/**
 * The projects the list answers, in order: every project the user may see (the service's default), narrowed by the
 * filters. A project in the user's own namespace counts as owned, at the owner's level.
 */
export async function listProjects(namespaces: NamespaceStorage, user: UserRecord, query: ProjectListQuery): Promise<Project[]> {
  const rows = (await namespaces.projectsWithAccess(user.id, query.search)).filter(({ project, access }) => {
    if (!canSeeProjectWith(user, project, access)) return false;
    const owns = ownsNamespaceOf(user, project);
    const level = owns ? OWNER : projectAccessLevel(access);
    if (query.membership && level === null) return false;
    if (query.min_access_level !== undefined && (level ?? 0) < query.min_access_level) return false;
    if (query.owned && !owns) return false;
    return query.visibility === undefined || project.visibility === query.visibility;
  });
  const key =
    query.order_by === 'name' ? (p: Project) => p.name : query.order_by === 'path' ? (p: Project) => p.path : query.order_by === 'id' ? (p: Project) => p.id : (p: Project) => p.created_at;
  return ordered(
    rows.map((r) => r.project),
    key,
    query.sort ?? 'desc',
  );
}

/** A member as the membership look-ups answer: the user and their access level there. */
export interface Member {
  user: UserRecord;
  accessLevel: number;
}

/**
 * The user's membership of the group, if the caller may see the group (undefined group: not found, as the API
 * answers for a group the caller may not see). There are no parent groups here, so "all" is the direct one.
 */
export async function groupMember(storage: { namespaces: NamespaceStorage; users: UserStorage }, caller: UserRecord, idOrPath: string, userId: number) {
  const group = await visibleGroup(storage.namespaces, caller, idOrPath);
  if (!group) return { group: undefined, member: undefined };
  const [user, access] = await Promise.all([storage.users.byId(userId), storage.namespaces.groupAccess(userId, group)]);
  return { group, member: user && access.direct !== null ? ({ user, accessLevel: access.direct } satisfies Member) : undefined };
}

/**
 * The user's membership of the project, direct or through its group, at the higher of the two (the service answers
 * the membership with the highest access level); the owner of a personal namespace is its projects' owner.
 */
export async function projectMember(storage: { namespaces: NamespaceStorage; users: UserStorage }, caller: UserRecord, idOrPath: string, userId: number) {
  const project = await visibleProject(storage.namespaces, caller, idOrPath);
  if (!project) return { project: undefined, member: undefined };
  const [user, access] = await Promise.all([storage.users.byId(userId), storage.namespaces.projectAccess(userId, project)]);
  if (!user) return { project, member: undefined };
  const level = ownsNamespaceOf(user, project) ? OWNER : projectAccessLevel(access);
  return { project, member: level === null ? undefined : ({ user, accessLevel: level } satisfies Member) };
}

/** A membership as the look-ups answer it: the user's public fields and the level; memberships here never expire. */
export function presentMember({ user, accessLevel }: Member, baseUrl: string): components['schemas']['Member'] {
  const { id, username, name, state, avatar_url, web_url } = presentUser(user, baseUrl);
  return { id, username, name, state, avatar_url, web_url, access_level: accessLevel as components['schemas']['Member']['access_level'], expires_at: null, membership_state: 'active' };
}
