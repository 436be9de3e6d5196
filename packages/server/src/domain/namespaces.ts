// Groups and projects: the rules for a new one (its path, name, visibility and members), adding it, and how the API
// shows it (the fields of the service's objects that tokenbell keeps; clients fetch the object before its
// notification settings, as python-gitlab's `gl.projects.get('acme/widgets')`, and read its id, paths and namespace).
import type { components } from '@tokenbell/sdk';
import { InputError } from '../explained-error.js';
import type { Store } from '../store/file-store.js';
import type { GroupRecord, Membership, ProjectRecord, Visibility } from '../store/schema.js';
import { usernamePattern } from './accounts.js';
import { projectFullPath } from './visibility.js';

/** Access levels as the service numbers them: guest, reporter, developer, maintainer, owner. */
export const accessLevels: ReadonlySet<number> = new Set([10, 20, 30, 40, 50]);
const visibilities: ReadonlySet<string> = new Set<Visibility>(['private', 'internal', 'public']);

export interface NewNamespaceEntry {
  path: string;
  name: string;
  visibility: Visibility;
}

/** The fields a group and a project share: a path like a username's, a name, a visibility. Throws InputError. */
export function checkNamespaceEntryFields(entry: Record<string, unknown>): NewNamespaceEntry {
  const { path, name, visibility } = entry;
  if (typeof path !== 'string' || !usernamePattern.test(path)) {
    throw new InputError('path', 'must be 1 to 255 letters, digits, "_", "." or "-", and must not start with "." or "-"');
  }
  if (typeof name !== 'string' || name.trim() === '') throw new InputError('name', 'must not be blank');
  if (name.length > 255) throw new InputError('name', 'must be at most 255 characters long');
  if (typeof visibility !== 'string' || !visibilities.has(visibility)) throw new InputError('visibility', 'must be private, internal or public');
  return { path, name, visibility: visibility as Visibility };
}

/** Adds a group; call inside `store.commit`. Throws InputError, changing nothing, if the path is taken. */
export function insertGroup(store: Store, group: NewNamespaceEntry, members: Membership[], createdAt: string): GroupRecord {
  if (store.lookup('groups', 'path', group.path)) throw new InputError('path', `the group ${JSON.stringify(group.path)} already exists`, 'taken');
  if (store.lookup('users', 'username', group.path)) throw new InputError('path', `${JSON.stringify(group.path)} is already a username`, 'taken');
  return store.insert('groups', {
    id: store.nextId('groups'),
    path: group.path,
    name: group.name.trim(),
    visibility: group.visibility,
    members,
    created_at: createdAt,
  });
}

/**
 * Adds a project in a namespace, a group's path or a username (the project then lives in that user's namespace);
 * call inside `store.commit`. Throws InputError, changing nothing, for an unknown namespace or a taken full path.
 */
export function insertProject(store: Store, namespace: string, project: NewNamespaceEntry, members: Membership[], createdAt: string): ProjectRecord {
  const group = store.lookup('groups', 'path', namespace);
  const owner = group?.path ?? store.lookup('users', 'username', namespace)?.username;
  if (owner === undefined) throw new InputError('namespace', `${JSON.stringify(namespace)} is neither a group's path nor a username`, 'unknown');
  const fullPath = `${owner}/${project.path}`;
  if (store.lookup('projects', 'fullPath', fullPath)) throw new InputError('path', `the project ${JSON.stringify(fullPath)} already exists`, 'taken');
  return store.insert('projects', {
    id: store.nextId('projects'),
    namespace: owner,
    path: project.path,
    name: project.name.trim(),
    visibility: project.visibility,
    group_id: group?.id ?? null,
    members,
    created_at: createdAt,
  });
}

type Schemas = components['schemas'];

export function presentGroup(group: GroupRecord, baseUrl: string): Schemas['Group'] {
  return {
    id: group.id,
    name: group.name,
    path: group.path,
    full_name: group.name,
    full_path: group.path,
    visibility: group.visibility,
    web_url: `${baseUrl}/groups/${group.path}`,
    avatar_url: null,
    parent_id: null,
    created_at: group.created_at,
  };
}

/** The project's namespace: its group's, or its owner's personal one (the seed names it by username). */
function namespaceOf(store: Store, project: ProjectRecord): Schemas['Project']['namespace'] {
  if (project.group_id !== null) {
    const group = store.lookup('groups', 'id', project.group_id);
    if (group) return { id: group.id, name: group.name, path: group.path, kind: 'group', full_path: group.path };
  }
  const owner = store.lookup('users', 'username', project.namespace);
  return { id: owner?.id ?? project.id, name: owner?.name ?? project.namespace, path: project.namespace, kind: 'user', full_path: project.namespace };
}

export function presentProject(store: Store, project: ProjectRecord, baseUrl: string): Schemas['Project'] {
  const namespace = namespaceOf(store, project);
  const fullPath = projectFullPath(project);
  return {
    id: project.id,
    name: project.name,
    path: project.path,
    name_with_namespace: `${namespace.name} / ${project.name}`,
    path_with_namespace: fullPath,
    visibility: project.visibility,
    web_url: `${baseUrl}/${fullPath}`,
    avatar_url: null,
    namespace,
    created_at: project.created_at,
  };
}
