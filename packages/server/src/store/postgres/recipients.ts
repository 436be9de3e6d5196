// Who may hear of an event (domain/storage/recipients.ts) on PostgreSQL: the project (as namespaces answer it), then
// who has a tie to it, then their accounts, standing and settings at once: the same few statements whatever the
// audience's size.
import type pg from 'pg';
import type { Audience, AudienceMember, NamespaceStorage, RecipientStorage } from '../../domain/storage/index.js';
import { settingOf, type SettingRow } from './notification-settings.js';
import { isId, userColumns, userOf, type UserRow } from './rows.js';

export function postgresRecipientStorage(pool: pg.Pool, projectById: NamespaceStorage['projectById']): RecipientStorage {
  return {
    async audience(projectId, userIds) {
      const project = await projectById(projectId);
      if (!project) return undefined;
      const groupId = project.group_id;
      const { rows: interestedRows } = await pool.query<{ user_id: string }>(
        `SELECT user_id FROM project_members WHERE project_id = $1
         UNION SELECT user_id FROM group_members WHERE group_id = $2
         UNION SELECT user_id FROM notification_settings
               WHERE (source_type = 'project' AND source_id = $1) OR (source_type = 'group' AND source_id = $2)`,
        [project.id, groupId],
      );
      const interested = interestedRows.map((row) => Number(row.user_id));
      const ids = [...new Set([...interested, ...userIds.filter(isId)])];
      const [users, settings] = await Promise.all([
        pool.query<UserRow & { direct: number | null; inherited: number | null }>(
          `SELECT ${userColumns}, project_members.access_level AS direct, group_members.access_level AS inherited
           FROM users
           LEFT JOIN project_members ON project_members.project_id = $2 AND project_members.user_id = users.id
           LEFT JOIN group_members ON group_members.group_id = $3 AND group_members.user_id = users.id
           WHERE users.id = ANY ($1::bigint[])`,
          [ids, project.id, groupId],
        ),
        pool.query<SettingRow>(
          `SELECT user_id, source_type, source_id, level, notification_email, events FROM notification_settings
           WHERE user_id = ANY ($1::bigint[])
             AND (source_type = 'global' OR (source_type = 'project' AND source_id = $2) OR (source_type = 'group' AND source_id = $3))`,
          [ids, project.id, groupId],
        ),
      ]);
      const settingsOf = new Map<number, AudienceMember['settings']>();
      for (const row of settings.rows) {
        const setting = settingOf(row);
        const own = settingsOf.get(setting.user_id) ?? {};
        own[setting.source_type] = setting;
        settingsOf.set(setting.user_id, own);
      }
      const members: Audience['members'] = new Map();
      for (const row of users.rows) {
        const user = userOf(row);
        members.set(user.id, { user, access: { direct: row.direct, inherited: row.inherited }, settings: settingsOf.get(user.id) ?? {} });
      }
      return { project, interested, members };
    },
  };
}
