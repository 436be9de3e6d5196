// Access levels from the member lists of groups and projects: what the namespaces answer and what the recipients of a
// project's notification are checked against, so both ask the same table.
import type { Group, GroupAccess, Membership, Project, ProjectAccess } from '../../domain/storage/index.js';
import type { Store } from './store.js';

// Member lists reach thousands (every user of a big instance in one project), and every API call on a project asks.
// Records are frozen, so a table built once per list stays right for as long as the list exists.
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

/** A user's membership at `level`, where their first one was (any later one goes: one per user), or else last. */
export function withMembership(members: readonly Membership[], userId: number, level: number): Membership[] {
  const membership = { user_id: userId, access_level: level };
  const first = members.findIndex((m) => m.user_id === userId);
  if (first === -1) return [...members, membership];
  return members.flatMap((m, i) => (i === first ? [membership] : m.user_id === userId ? [] : [m]));
}

export const groupOf = (store: Store, project: Project) => (project.group_id === null ? undefined : store.lookup('groups', 'id', project.group_id));

export function projectAccess(store: Store, userId: number, project: Project): ProjectAccess {
  const group = groupOf(store, project);
  const members = store.lookup('projects', 'id', project.id)?.members ?? [];
  return { direct: levelIn(members, userId), inherited: group ? levelIn(group.members, userId) : null };
}

export function groupAccess(store: Store, userId: number, group: Group): GroupAccess {
  const members = store.lookup('groups', 'id', group.id)?.members ?? [];
  return {
    direct: levelIn(members, userId),
    inAProject: store.data.projects.some((p) => p.group_id === group.id && levelIn(p.members, userId) !== null),
  };
}
