// Groups and projects with their members (domain/storage/namespaces.ts) in the file store's `groups` and `projects`
// collections. A membership lives in its group's or project's record, so changing one writes a new version of it.
import { refusal, type NamespaceStorage } from '../../domain/storage/index.js';
import { insertGroup, insertProject } from './inserts.js';
import { groupAccess, projectAccess, withMembership } from './membership.js';
import type { Store } from './store.js';

/** Whether `search` is in one of `fields`, whatever the case (as PostgreSQL's `strpos(lower(...))` below). */
const matches = (search: string | undefined, ...fields: string[]) => search === undefined || fields.some((f) => f.toLowerCase().includes(search.toLowerCase()));

export function fileNamespaceStorage(store: Store): NamespaceStorage {
  return {
    async groupById(id) {
      return store.lookup('groups', 'id', id);
    },
    async groupByPath(path) {
      return store.lookup('groups', 'path', path);
    },
    async projectById(id) {
      return store.lookup('projects', 'id', id);
    },
    async projectByFullPath(fullPath) {
      return store.lookup('projects', 'fullPath', fullPath);
    },
    async projectAccess(userId, project) {
      return projectAccess(store, userId, project);
    },
    async groupAccess(userId, group) {
      return groupAccess(store, userId, group);
    },
    async projectWithAccess(ref, userId) {
      const project = 'id' in ref ? store.lookup('projects', 'id', ref.id) : store.lookup('projects', 'fullPath', ref.path);
      return project && { project, access: projectAccess(store, userId, project) };
    },
    // A scan: lists are asked far less often than single groups and projects, and the file store holds few of them.
    async groupsWithAccess(userId, search) {
      return [...store.data.groups]
        .filter((group) => matches(search, group.name, group.path))
        .sort((a, b) => a.id - b.id)
        .map((group) => ({ group, access: groupAccess(store, userId, group) }));
    },
    async projectsWithAccess(userId, search) {
      return [...store.data.projects]
        .filter((project) => matches(search, project.name, project.path))
        .sort((a, b) => a.id - b.id)
        .map((project) => ({ project, access: projectAccess(store, userId, project) }));
    },
    async groupMembershipsOf(userId) {
      // Groups are few next to API calls, and this is asked once per sign-in; a scan is fine.
      return [...store.data.groups]
        .sort((a, b) => a.id - b.id)
        .flatMap((group) => {
          const level = groupAccess(store, userId, group).direct;
          return level === null ? [] : [{ path: group.path, access_level: level }];
        });
    },
    async groupWithAccess(ref, userId) {
      const group = 'id' in ref ? store.lookup('groups', 'id', ref.id) : store.lookup('groups', 'path', ref.path);
      return group && { group, access: groupAccess(store, userId, group) };
    },
    createGroup(group, members) {
      return store.commit(() => insertGroup(store, group, members));
    },
    createProject(project, members) {
      return store.commit(() => insertProject(store, project, members));
    },
    async setMembership(target, userId, accessLevel) {
      await store.commit(() => {
        const group = 'groupId' in target ? store.lookup('groups', 'id', target.groupId) : undefined;
        const project = 'projectId' in target ? store.lookup('projects', 'id', target.projectId) : undefined;
        // The group or project before the user, in the order PostgreSQL checks its foreign keys.
        if ('groupId' in target && !group) throw refusal.unknownMember('group_id', target.groupId);
        if ('projectId' in target && !project) throw refusal.unknownMember('project_id', target.projectId);
        if (!store.lookup('users', 'id', userId)) throw refusal.unknownMember('user_id', userId);
        if (group) store.update('groups', group, { members: withMembership(group.members, userId, accessLevel) });
        if (project) store.update('projects', project, { members: withMembership(project.members, userId, accessLevel) });
      });
    },
  };
}
