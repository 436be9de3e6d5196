// Groups and projects with their members (domain/storage/namespaces.ts) in the file store's `groups` and `projects`
// collections. A membership lives in its group's or project's record, so changing one writes a new version of it.
import { refusal, type NamespaceStorage } from '../../domain/storage/index.js';
import { insertGroup, insertProject } from './inserts.js';
import { groupAccess, projectAccess, withMembership } from './membership.js';
import type { Store } from './store.js';

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
