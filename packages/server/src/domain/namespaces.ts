// Groups and projects as the API shows them: the fields of the service's objects that tokenbell keeps. Clients
// fetch the object before its notification settings (python-gitlab's `gl.projects.get('acme/widgets')`), and read
// its id, paths and namespace from it.
import type { components } from '@tokenbell/sdk';
import type { Store } from '../store/file-store.js';
import type { GroupRecord, ProjectRecord } from '../store/schema.js';
import { projectFullPath } from './visibility.js';

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
