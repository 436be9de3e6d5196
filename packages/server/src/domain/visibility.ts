// The single visibility rule. The API answers 404 for a group or project the caller may not see, exactly as for a
// missing one (GitLab's API does the same, so private names do not leak), and the notification code drops recipients
// who could not open the project the mail is about. Both must agree, so both come here.
import type { Group, GroupAccess, NamespaceRef, NamespaceStorage, Project, ProjectAccess } from './storage/index.js';
import type { UserRecord } from './storage/records.js';
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
  return levelAdmits(user, project.visibility, (member) => ownsNamespaceOf(member, project) || (access !== null && projectAccessLevel(access) !== null));
}

export async function canSeeGroup(user: UserRecord | null, group: Group, access: () => Promise<GroupAccess>): Promise<boolean> {
  if (group.visibility !== 'private') return canSeeGroupWith(user, group, null);
  return isActive(user) && canSeeGroupWith(user, group, await access());
}

/** The rule itself, with the user's standing already known (null: not needed, the group is not private). */
export function canSeeGroupWith(user: UserRecord | null | undefined, group: Group, access: GroupAccess | null): boolean {
  // GitLab lets a member of one of the group's projects see the group (GroupPolicy: "has_projects"), or the
  // project's breadcrumb would point at a page they cannot open.
  return levelAdmits(user, group.visibility, () => access !== null && (access.direct !== null || access.inAProject));
}

/**
 * What a visibility level lets a user see, the same for groups and projects: public, anyone; internal, any active
 * user; private, an active administrator or a user `admitted` lets in (a member, by the rule of each).
 */
function levelAdmits(user: UserRecord | null | undefined, visibility: Project['visibility'], admitted: (user: UserRecord) => boolean): boolean {
  if (visibility === 'public') return true;
  if (!isActive(user)) return false;
  return visibility === 'internal' || user.is_admin || admitted(user);
}

const allDigits = /^[0-9]+$/;
const refOf = (idOrPath: string): NamespaceRef => (allDigits.test(idOrPath) ? { id: Number(idOrPath) } : { path: idOrPath });

/**
 * `idOrPath` is the decoded URL segment. All digits is an id and never a path (GitLab's `find_project` helper decides
 * the same way; its 8.x `find_group` also retried an unknown id as a path, which would make an all-digits group path
 * ambiguous, so one rule serves both here). Anything else is a path compared case-insensitively, since GitLab paths
 * are unique regardless of case.
 */
export function findGroup(namespaces: NamespaceStorage, idOrPath: string): Promise<Group | undefined> {
  const ref = refOf(idOrPath);
  return 'id' in ref ? namespaces.groupById(ref.id) : namespaces.groupByPath(ref.path);
}

export function projectFullPath(project: Project): string {
  return `${project.namespace}/${project.path}`;
}

export function findProject(namespaces: NamespaceStorage, idOrPath: string): Promise<Project | undefined> {
  const ref = refOf(idOrPath);
  return 'id' in ref ? namespaces.projectById(ref.id) : namespaces.projectByFullPath(ref.path);
}

/** The group with this id or path if the user may see it. */
export async function visibleGroup(namespaces: NamespaceStorage, user: UserRecord, idOrPath: string): Promise<Group | undefined> {
  // Found with the user's standing in one question, asked even when a public group would not need it: one round trip
  // to a database costs more than the answer it might spare.
  const found = await namespaces.groupWithAccess(refOf(idOrPath), user.id);
  return found && canSeeGroupWith(user, found.group, found.access) ? found.group : undefined;
}

/** The project with this id or full path if the user may see it. */
export async function visibleProject(namespaces: NamespaceStorage, user: UserRecord, idOrPath: string): Promise<Project | undefined> {
  const found = await namespaces.projectWithAccess(refOf(idOrPath), user.id);
  return found && canSeeProjectWith(user, found.project, found.access) ? found.project : undefined;
}
