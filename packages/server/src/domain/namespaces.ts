// Groups and projects: the rules for a new one (its path, name, visibility and members), adding it, and how the API
// shows it (the fields of the service's objects that tokenbell keeps; clients fetch the object before its
// notification settings, as python-gitlab's `gl.projects.get('acme/widgets')`, and read its id, paths and namespace).
import type { components } from '@tokenbell/sdk';
import { InputError } from '../explained-error.js';
import type { Group, NamespaceStorage, Project, UserStorage } from './storage/index.js';
import type { Visibility } from './storage/records.js';
import { isoOf } from './time.js';
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

type Schemas = components['schemas'];

export function presentGroup(group: Group, baseUrl: string): Schemas['Group'] {
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
    created_at: isoOf(group.created_at),
  };
}

/** The project's namespace: its group's, or its owner's personal one (the seed names it by username). */
async function namespaceOf(namespaces: NamespaceStorage, users: UserStorage, project: Project): Promise<Schemas['Project']['namespace']> {
  if (project.group_id !== null) {
    const group = await namespaces.groupById(project.group_id);
    if (group) return { id: group.id, name: group.name, path: group.path, kind: 'group', full_path: group.path };
  }
  const owner = await users.byUsername(project.namespace);
  return { id: owner?.id ?? project.id, name: owner?.name ?? project.namespace, path: project.namespace, kind: 'user', full_path: project.namespace };
}

export async function presentProject(storage: { namespaces: NamespaceStorage; users: UserStorage }, project: Project, baseUrl: string): Promise<Schemas['Project']> {
  const namespace = await namespaceOf(storage.namespaces, storage.users, project);
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
    created_at: isoOf(project.created_at),
  };
}

/** A project in the service's simple view (`simple=true`): the same fields but its visibility. */
export async function presentSimpleProject(storage: { namespaces: NamespaceStorage; users: UserStorage }, project: Project, baseUrl: string): Promise<Schemas['ProjectSimple']> {
  const { visibility: _visibility, ...simple } = await presentProject(storage, project, baseUrl);
  return simple;
}
