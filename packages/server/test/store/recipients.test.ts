// The recipients' port (domain/storage/recipients.ts) on every backend (backends.ts): who may hear of a project's
// events, with their access and settings.
import { describe, expect, it } from 'vitest';
import type { NotificationSettingRecord, UserRecord } from '../../src/domain/storage/records.js';
import { everyBackend, newGroup, newProject, newUser, setting, useBackends, withoutMembers } from './backends.js';

const { open } = useBackends();

describe.each(everyBackend)('recipients on %s', (name) => {
  it("gathers a project's audience: members direct and through the group, users with a setting for either, and those asked for", async () => {
    const { storages: [storage] } = await open(name);
    const names = ['member', 'groupie', 'watcher', 'groupwatcher', 'global', 'asked', 'elsewhere'] as const;
    const users = {} as Record<(typeof names)[number], UserRecord>;
    for (const n of names) users[n] = await storage.users.create(newUser(n));
    const acme = await storage.namespaces.createGroup(newGroup('acme'), [{ user_id: users.groupie.id, access_level: 40 }]);
    const widgets = await storage.namespaces.createProject(newProject('acme', 'widgets'), [{ user_id: users.member.id, access_level: 30 }]);
    const personal = await storage.namespaces.createProject(newProject('member', 'notes'), []);
    const put = (s: NotificationSettingRecord) => storage.notificationSettings.change(s, { events: {} });
    const memberGlobal = await put(setting(users.member.id, 'global', null, 'mention'));
    const watcherProject = await put(setting(users.watcher.id, 'project', widgets.id, 'watch'));
    const groupwatcherGroup = await put(setting(users.groupwatcher.id, 'group', acme.id, 'disabled'));
    const globalGlobal = await put(setting(users.global.id, 'global', null, 'participating'));
    const groupieProject = await put(setting(users.groupie.id, 'project', widgets.id, 'custom'));
    await put(setting(users.elsewhere.id, 'project', personal.id, 'watch'));
    await put(setting(users.watcher.id, 'project', personal.id, 'disabled'));

    const audience = (await storage.recipients.audience(widgets.id, [users.global.id, users.asked.id, users.member.id, 9999]))!;
    expect(withoutMembers(audience.project)).toEqual(withoutMembers(widgets));
    const ids = (list: Iterable<number>) => [...list].sort((x, y) => x - y);
    expect(ids(audience.interested)).toEqual(ids([users.member.id, users.groupie.id, users.watcher.id, users.groupwatcher.id]));
    expect(ids(audience.members.keys())).toEqual(ids([users.member.id, users.groupie.id, users.watcher.id, users.groupwatcher.id, users.global.id, users.asked.id]));
    const none = { direct: null, inherited: null };
    expect(audience.members.get(users.member.id)).toEqual({ user: users.member, access: { direct: 30, inherited: null }, settings: { global: memberGlobal } });
    expect(audience.members.get(users.groupie.id)).toEqual({ user: users.groupie, access: { direct: null, inherited: 40 }, settings: { project: groupieProject } });
    expect(audience.members.get(users.watcher.id)).toEqual({ user: users.watcher, access: none, settings: { project: watcherProject } });
    expect(audience.members.get(users.groupwatcher.id)).toEqual({ user: users.groupwatcher, access: none, settings: { group: groupwatcherGroup } });
    expect(audience.members.get(users.global.id)).toEqual({ user: users.global, access: none, settings: { global: globalGlobal } });
    expect(audience.members.get(users.asked.id)).toEqual({ user: users.asked, access: none, settings: {} });

    // A project in a user's namespace has no group, so group settings play no part.
    const ofPersonal = (await storage.recipients.audience(personal.id, [users.groupwatcher.id]))!;
    expect(ids(ofPersonal.interested)).toEqual(ids([users.elsewhere.id, users.watcher.id]));
    expect(ids(ofPersonal.members.keys())).toEqual(ids([users.elsewhere.id, users.watcher.id, users.groupwatcher.id]));
    expect(ofPersonal.members.get(users.groupwatcher.id)?.settings).toEqual({});
    expect(ofPersonal.members.get(users.watcher.id)?.settings).toEqual({ project: setting(users.watcher.id, 'project', personal.id, 'disabled') });

    expect(await storage.recipients.audience(personal.id + 100, [users.member.id])).toBeUndefined();
    expect(await storage.recipients.audience(Number.NaN, [])).toBeUndefined();
  });
});
