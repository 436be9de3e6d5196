// The single visibility rule. The API answers 404 for a group or project the caller may not see, exactly as for a
// missing one (GitLab's API does the same, so private names do not leak), and the notification code drops recipients
// who could not open the project the mail is about. Both must agree, so both come here.
import type { Store } from '../store/file-store.js';
import type { GroupRecord, Membership, ProjectRecord, StoreData, UserRecord } from '../store/schema.js';
import { isActive } from './users.js';


// Member lists reach thousands (every user of a big instance in one project), and every API call on a project asks.
// Store records are frozen, so a table built once per list stays right for as long as the list exists.
const levelTables = new WeakMap<readonly Membership[], Map<number, number>>();

function levelIn(members: readonly Membership[], userId: number): number | null {
  if (members.length < 32 || !Object.isFrozen(members)) {
    const m = members.find((x) => x.user_id === userId);
    return m ? m.access_level : null;
  }
  let table = levelTables.get(members);
  if (!table) {
    // Reversed, so that when a user appears twice the first entry wins, as `find` would have it.
    table = new Map(members.toReversed().map((m) => [m.user_id, m.access_level]));
    levelTables.set(members, table);
  }
  return table.get(userId) ?? null;
}

function groupOf(data: StoreData, project: ProjectRecord): GroupRecord | undefined {
  return project.group_id === null ? undefined : data.groups.find((g) => g.id === project.group_id);
}

/**
 * The user's access level on a project: the higher of the direct membership and the membership of the project's
 * group (GitLab members inherit the group's level on every project of the group, and a direct membership may only
 * raise it). Null when the user is neither.
 */
export function projectAccessLevel(data: StoreData, userId: number, project: ProjectRecord): number | null {
  const direct = levelIn(project.members, userId);
  const group = groupOf(data, project);
  const inherited = group ? levelIn(group.members, userId) : null;
  if (direct === null) return inherited;
  if (inherited === null) return direct;
  return Math.max(direct, inherited);
}

/** The user's access level on a group (direct membership only: 8.12-era groups do not nest). */
export function groupAccessLevel(userId: number, group: GroupRecord): number | null {
  return levelIn(group.members, userId);
}

export function isProjectMember(data: StoreData, userId: number, project: ProjectRecord): boolean {
  return projectAccessLevel(data, userId, project) !== null;
}

export function isGroupMember(userId: number, group: GroupRecord): boolean {
  return groupAccessLevel(userId, group) !== null;
}

/**
 * A project in a user's namespace (no group) belongs to that user, who owns it whatever its member list says, as in
 * GitLab, where the namespace owner has owner access to every project in it. The seed stores the namespace as the
 * owner's username; usernames never change.
 */
export function ownsNamespaceOf(user: UserRecord, project: ProjectRecord): boolean {
  return project.group_id === null && project.namespace.toLowerCase() === user.username.toLowerCase();
}

export function canSeeProject(data: StoreData, user: UserRecord | null, project: ProjectRecord): boolean {
  if (project.visibility === 'public') return true;
  if (!isActive(user)) return false;
  if (project.visibility === 'internal') return true;
  return user.is_admin || ownsNamespaceOf(user, project) || isProjectMember(data, user.id, project);
}

export function canSeeGroup(data: StoreData, user: UserRecord | null, group: GroupRecord): boolean {
  if (group.visibility === 'public') return true;
  if (!isActive(user)) return false;
  if (group.visibility === 'internal') return true;
  if (user.is_admin || isGroupMember(user.id, group)) return true;
  // GitLab lets a member of one of the group's projects see the group (GroupPolicy: "has_projects"), or the
  // project's breadcrumb would point at a page they cannot open.
  return data.projects.some((p) => p.group_id === group.id && levelIn(p.members, user.id) !== null);
}

const allDigits = /^[0-9]+$/;

/**
 * `idOrPath` is the decoded URL segment. All digits is an id and never a path (GitLab's `find_project` helper decides
 * the same way; its 8.x `find_group` also retried an unknown id as a path, which would make an all-digits group path
 * ambiguous, so one rule serves both here). Anything else is a path compared case-insensitively, since GitLab paths
 * are unique regardless of case.
 */
export function findGroup(store: Store, idOrPath: string): GroupRecord | undefined {
  return allDigits.test(idOrPath) ? store.lookup('groups', 'id', Number(idOrPath)) : store.lookup('groups', 'path', idOrPath);
}

export function projectFullPath(project: ProjectRecord): string {
  return `${project.namespace}/${project.path}`;
}

export function findProject(store: Store, idOrPath: string): ProjectRecord | undefined {
  return allDigits.test(idOrPath)
    ? store.lookup('projects', 'id', Number(idOrPath))
    : store.lookup('projects', 'fullPath', idOrPath);
}
