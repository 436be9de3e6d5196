import { describe, expect, it } from 'vitest';
import type { NotificationLevel } from '../../src/domain/storage/records.js';
import { notificationLevels } from '../../src/openapi/document.js';
import { effectiveSetting, notificationEmailOf } from '../../src/domain/notification-levels.js';
import type { ProjectRecord } from '../../src/domain/storage/records.js';
import { events, StoreBuilder } from './fixtures.js';

/** The user's settings that bear on the project, as storage reads them for recipients. */
const settingsFor = async (b: StoreBuilder, userId: number, project: ProjectRecord) => (await b.storage().recipients.audience(project.id, [userId]))!.members.get(userId)!.settings;

type Stored = NotificationLevel | null;

describe('effectiveSetting: project over group over global', () => {
  // [project, group, global, in a group?, expected level, expected source]; null means nothing stored there.
  const table: [Stored, Stored, Stored, boolean, string, string][] = [
    [null, null, null, true, 'participating', 'global'],
    [null, null, null, false, 'participating', 'global'],
    ['watch', null, null, true, 'watch', 'project'],
    ['watch', 'disabled', 'mention', true, 'watch', 'project'],
    ['disabled', 'watch', 'watch', true, 'disabled', 'project'],
    ['global', 'mention', 'watch', true, 'mention', 'group'],
    [null, 'mention', 'watch', true, 'mention', 'group'],
    ['global', 'global', 'watch', true, 'watch', 'global'],
    ['global', null, 'disabled', true, 'disabled', 'global'],
    [null, 'global', null, true, 'participating', 'global'],
    ['global', 'global', null, true, 'participating', 'global'],
    ['global', null, 'custom', false, 'custom', 'global'],
    [null, null, 'mention', false, 'mention', 'global'],
    ['custom', 'watch', 'watch', true, 'custom', 'project'],
    ['global', 'custom', 'watch', true, 'custom', 'group'],
  ];

  it.each(table)('project %s, group %s, global %s (in group: %s) → %s from %s', async (project, group, global, inGroup, level, source) => {
    const b = new StoreBuilder();
    const user = b.user('u');
    const g = b.group('acme');
    const p = b.project('widgets', 'private', inGroup ? g : null);
    if (project) b.projectSetting(user, p, project);
    if (group) b.groupSetting(user, g, group);
    if (global) b.globalSetting(user, global);
    const s = effectiveSetting(await settingsFor(b, user.id, p));
    expect(s.level).toBe(level);
    expect(s.source).toBe(source);
  });

  it('a group setting of another group does not apply', async () => {
    const b = new StoreBuilder();
    const user = b.user('u');
    const g = b.group('acme');
    const other = b.group('other');
    const p = b.project('widgets', 'private', g);
    b.groupSetting(user, other, 'watch');
    expect(effectiveSetting(await settingsFor(b, user.id, p))).toMatchObject({ level: 'participating', source: 'global' });
  });

  it('settings of other users do not apply', async () => {
    const b = new StoreBuilder();
    const user = b.user('u');
    const other = b.user('other');
    const p = b.project('widgets', 'private', null);
    b.projectSetting(other, p, 'watch').globalSetting(other, 'disabled');
    expect(effectiveSetting(await settingsFor(b, user.id, p)).level).toBe('participating');
  });

  it('never resolves to global, whatever is stored', async () => {
    for (const level of notificationLevels) {
      const b = new StoreBuilder();
      const user = b.user('u');
      const p = b.project('widgets', 'private', null);
      b.projectSetting(user, p, level);
      expect(effectiveSetting(await settingsFor(b, user.id, p)).level).not.toBe('global');
    }
  });
});

describe('effectiveSetting: events come from the setting that decided', () => {
  const projectEvents = events(['new_issue']);
  const groupEvents = events(['new_note']);
  const globalEvents = events(['failed_pipeline']);

  it.each([
    ['project custom', 'custom', 'global', projectEvents],
    ['project global, group custom', 'global', 'custom', groupEvents],
    ['project global, group global, global custom', 'global', 'global', globalEvents],
    // A project at `watch` keeps its stored events (they are shown again if the user switches back to custom).
    ['project watch', 'watch', 'custom', projectEvents],
  ] as const)('%s', async (_name, projectLevel, groupLevel, expected) => {
    const b = new StoreBuilder();
    const user = b.user('u');
    const g = b.group('acme');
    const p = b.project('widgets', 'private', g);
    b.projectSetting(user, p, projectLevel, projectEvents)
      .groupSetting(user, g, groupLevel, groupEvents)
      .globalSetting(user, 'custom', { events: globalEvents });
    expect(effectiveSetting(await settingsFor(b, user.id, p)).events).toEqual(expected);
  });

  it('all events false when nothing is stored', async () => {
    const b = new StoreBuilder();
    const user = b.user('u');
    const p = b.project('widgets', 'private', null);
    expect(effectiveSetting(await settingsFor(b, user.id, p)).events).toEqual(events());
  });

  it('returns a copy, so callers cannot change the store through it', async () => {
    const b = new StoreBuilder();
    const user = b.user('u');
    const p = b.project('widgets', 'private', null);
    b.projectSetting(user, p, 'custom', events(['new_issue']));
    const settings = await settingsFor(b, user.id, p);
    effectiveSetting(settings).events.new_issue = false;
    expect(settings.project?.events.new_issue).toBe(true);
  });
});

describe('notificationEmail', () => {
  it.each([
    ['no global setting', undefined, false, 'u@example.com'],
    ['global setting without an address', undefined, true, 'u@example.com'],
    ['global setting with an address', 'alerts@example.org', true, 'alerts@example.org'],
  ])('%s', async (_name, address, stored, expected) => {
    const b = new StoreBuilder();
    const user = b.user('u');
    if (stored) b.globalSetting(user, 'participating', address ? { notification_email: address } : {});
    expect(notificationEmailOf((await settingsFor(b, user.id, b.project('p', 'public', null))).global, user)).toBe(expected);
  });
});
