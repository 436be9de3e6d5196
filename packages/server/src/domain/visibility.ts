// The single visibility rule. The API answers 404 for a group or project the caller may not see, exactly as for a
// missing one (GitLab's API does the same, so private names do not leak), and the notification code drops recipients
// who could not open the project the mail is about. Both must agree, so both come here.
import type { Group, GroupAccess, NamespaceStorage, Project, ProjectAccess } from '../store/storage.js';
import type { UserRecord } from '../store/schema.js';
import { isActive } from './users.js';

/**
 * The user's access level on a project: the higher of the direct membership and the membership of the project's
 * group (GitLab members inherit the group's level on every project of the group, and a direct membership may only
 * raise it). Null when the user is neither.
 */
export function projectAccessLevel({ direct, inherited }: ProjectAccess): number | null {
  if (direct === null) return inherited;
  if (inherited === null) return direct;
  return Math.max(direct, inherited);
}

/**
 * A project in a user's namespace (no group) belongs to that user, who owns it whatever its member list says, as in
 * GitLab, where the namespace owner has owner access to every project in it. The seed stores the namespace as the
 * owner's username; usernames never change.
 */
export function ownsNamespaceOf(user: UserRecord, project: Project): boolean {
  return project.group_id === null && project.namespace.toLowerCase() === user.username.toLowerCase();
}

/** `access` is the user's standing on the project (only asked for a private project, when it decides). */
export async function canSeeProject(user: UserRecord | null, project: Project, access: () => Promise<ProjectAccess>): Promise<boolean> {
  if (project.visibility !== 'private') return canSeeProjectWith(user, project, null);
  return isActive(user) && canSeeProjectWith(user, project, await access());
}

/** The rule itself, with the user's standing already known (null: not needed, the project is not private). */
export function canSeeProjectWith(user: UserRecord | null | undefined, project: Project, access: ProjectAccess | null): boolean {
  if (project.visibility === 'public') return true;
  if (!isActive(user)) return false;
  if (project.visibility === 'internal') return true;
  return user.is_admin || ownsNamespaceOf(user, project) || (access !== null && projectAccessLevel(access) !== null);
}

export async function canSeeGroup(user: UserRecord | null, group: Group, access: () => Promise<GroupAccess>): Promise<boolean> {
  if (group.visibility === 'public') return true;
  if (!isActive(user)) return false;
  if (group.visibility === 'internal') return true;
  if (user.is_admin) return true;
  const { direct, inAProject } = await access();
  // GitLab lets a member of one of the group's projects see the group (GroupPolicy: "has_projects"), or the
  // project's breadcrumb would point at a page they cannot open.
  return direct !== null || inAProject;
}

const allDigits = /^[0-9]+$/;

/**
 * `idOrPath` is the decoded URL segment. All digits is an id and never a path (GitLab's `find_project` helper decides
 * the same way; its 8.x `find_group` also retried an unknown id as a path, which would make an all-digits group path
 * ambiguous, so one rule serves both here). Anything else is a path compared case-insensitively, since GitLab paths
 * are unique regardless of case.
 */
export function findGroup(namespaces: NamespaceStorage, idOrPath: string): Promise<Group | undefined> {
  return allDigits.test(idOrPath) ? namespaces.groupById(Number(idOrPath)) : namespaces.groupByPath(idOrPath);
}

export function projectFullPath(project: Project): string {
  return `${project.namespace}/${project.path}`;
}

export function findProject(namespaces: NamespaceStorage, idOrPath: string): Promise<Project | undefined> {
  return allDigits.test(idOrPath) ? namespaces.projectById(Number(idOrPath)) : namespaces.projectByFullPath(idOrPath);
}

/** The group with this id or path if the user may see it. */
export async function visibleGroup(namespaces: NamespaceStorage, user: UserRecord, idOrPath: string): Promise<Group | undefined> {
  const group = await findGroup(namespaces, idOrPath);
  return group && (await canSeeGroup(user, group, () => namespaces.groupAccess(user.id, group))) ? group : undefined;
}

/** The project with this id or full path if the user may see it. */
export async function visibleProject(namespaces: NamespaceStorage, user: UserRecord, idOrPath: string): Promise<Project | undefined> {
  const project = await findProject(namespaces, idOrPath);
  return project && (await canSeeProject(user, project, () => namespaces.projectAccess(user.id, project))) ? project : undefined;
}
