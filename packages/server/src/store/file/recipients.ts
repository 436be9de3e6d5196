// The audience of an event on a project (domain/storage/recipients.ts), gathered from the file store's member lists
// and notification settings: each user with their access and settings at every level, so the domain chooses the
// recipients from one answer.
import type { Audience, AudienceMember, RecipientStorage } from '../../domain/storage/index.js';
import { groupOf, projectAccess } from './membership.js';
import { findSetting } from './notification-settings.js';
import type { Store } from './store.js';

export function fileRecipientStorage(store: Store): RecipientStorage {
  return {
    async audience(projectId, userIds) {
      const project = store.lookup('projects', 'id', projectId);
      if (!project) return undefined;
      const interested = new Set<number>(project.members.map((m) => m.user_id));
      const group = groupOf(store, project);
      for (const m of group?.members ?? []) interested.add(m.user_id);
      for (const s of store.data.notification_settings) {
        if ((s.source_type === 'project' && s.source_id === project.id) || (s.source_type === 'group' && group && s.source_id === group.id)) interested.add(s.user_id);
      }
      const members: Audience['members'] = new Map();
      for (const id of new Set([...interested, ...userIds])) {
        const user = store.lookup('users', 'id', id);
        if (!user) continue;
        const settings: AudienceMember['settings'] = {};
        const own = findSetting(store, id, 'project', project.id);
        const ofGroup = group ? findSetting(store, id, 'group', group.id) : undefined;
        const global = findSetting(store, id, 'global', null);
        if (own) settings.project = own;
        if (ofGroup) settings.group = ofGroup;
        if (global) settings.global = global;
        members.set(id, { user, access: projectAccess(store, id, project), settings });
      }
      return { project, interested: [...interested], members };
    },
  };
}
