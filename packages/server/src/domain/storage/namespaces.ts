// What the domain asks of groups, projects and their members.
import type { GroupRecord, Membership, ProjectRecord } from './records.js';

/** A group as the domain sees it; its members are asked for, never listed. */
export type Group = Omit<GroupRecord, 'members'>;
/** A project as the domain sees it; its members are asked for, never listed. */
export type Project = Omit<ProjectRecord, 'members'>;
export type NewGroupRow = Omit<Group, 'id'>;
/** A project to add in `namespace` (a group's path or a username, whatever the case). */
export type NewProjectRow = Omit<Project, 'id' | 'namespace' | 'group_id'> & { namespace: string };

/** A user's standing on a project: their own membership and the one through the project's group. */
export interface ProjectAccess {
  direct: number | null;
  inherited: number | null;
}

/** A user's standing on a group: their membership, and whether they are a member of one of its projects. */
export interface GroupAccess {
  direct: number | null;
  inAProject: boolean;
}

/** A group or project named in a URL: by id, or by path (a project's full path), compared case-insensitively. */
export type NamespaceRef = { id: number } | { path: string };

export interface NamespaceStorage {
  groupById(id: number): Promise<Group | undefined>;
  groupByPath(path: string): Promise<Group | undefined>;
  projectById(id: number): Promise<Project | undefined>;
  projectByFullPath(fullPath: string): Promise<Project | undefined>;
  projectAccess(userId: number, project: Project): Promise<ProjectAccess>;
  groupAccess(userId: number, group: Group): Promise<GroupAccess>;
  /** The project and the user's standing on it in one question: every API call on a project asks both. */
  projectWithAccess(ref: NamespaceRef, userId: number): Promise<{ project: Project; access: ProjectAccess } | undefined>;
  /** The group and the user's standing on it in one question, as projectWithAccess. */
  groupWithAccess(ref: NamespaceRef, userId: number): Promise<{ group: Group; access: GroupAccess } | undefined>;
  /**
   * Every group with the user's standing on it, in the order of the groups' ids, narrowed to those whose name or path
   * contains `search` (any case) when given: what a list of groups is chosen from. Which the user may see, and the
   * list's other filters, are the domain's (visibility.ts), so the store answers standing, not visibility.
   */
  groupsWithAccess(userId: number, search?: string): Promise<Array<{ group: Group; access: GroupAccess }>>;
  /** Every project with the user's standing on it, as groupsWithAccess (`search` in its name or path). */
  projectsWithAccess(userId: number, search?: string): Promise<Array<{ project: Project; access: ProjectAccess }>>;
  /**
   * The groups the user is a direct member of, with their access level, in the order of the groups' ids: what an
   * OpenID Connect client learns of the user's memberships (`groups`, `groups_direct` and the role claims).
   */
  groupMembershipsOf(userId: number): Promise<Array<{ path: string; access_level: number }>>;
  /** Throws InputError `taken` when the path is a group's or a username. */
  createGroup(group: NewGroupRow, members: readonly Membership[]): Promise<Group>;
  /** Throws InputError `unknown` for an unknown namespace, `taken` for a taken full path. */
  createProject(project: NewProjectRow, members: readonly Membership[]): Promise<Project>;
  /**
   * Makes the user a member of the group or project at `accessLevel`, replacing any membership they had there (a
   * user has one per group or project). Throws InputError `unknown` for an unknown user, group or project.
   */
  setMembership(target: MembershipTarget, userId: number, accessLevel: number): Promise<void>;
}

/** A group or a project, by id. */
export type MembershipTarget = { groupId: number } | { projectId: number };
