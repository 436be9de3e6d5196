// The namespaces' port (domain/storage/namespaces.ts) on every backend (backends.ts): groups and projects, found by id
// or by path whatever the case, a user's access to each, and memberships set at run time; and on PostgreSQL from two
// instances at once, where two creations of one path, or of a user and a group of one name, race.
import { describe, expect, it } from 'vitest';
import { created, everyBackend, newApplication, newGroup, newPair, newProject, newToken, newUser, now, outcomes, refusal, useBackends, withoutMembers } from './backends.js';

const { open, instances } = useBackends();

describe.each(everyBackend)('namespaces on %s', (name) => {
  it("creates a group, finds it by id and by path whatever the case, and refuses a path that is a group's or a username", async () => {
    const { storages: [storage] } = await open(name);
    const owner = await storage.users.create(newUser('JSmith'));
    const acme = await storage.namespaces.createGroup(newGroup('Acme'), [{ user_id: owner.id, access_level: 50 }]);
    expect(withoutMembers(acme)).toEqual({ id: expect.any(Number), ...newGroup('Acme') });
    expect(withoutMembers(await storage.namespaces.groupById(acme.id))).toEqual(withoutMembers(acme));
    expect(withoutMembers(await storage.namespaces.groupByPath('ACME'))).toEqual(withoutMembers(acme));
    expect(await storage.namespaces.groupByPath('acme-corp')).toBeUndefined();
    expect(await storage.namespaces.groupById(acme.id + 1)).toBeUndefined();
    expect(await refusal(storage.namespaces.createGroup(newGroup('acme'), []))).toEqual({ field: 'path', code: 'taken', message: 'the group "acme" already exists' });
    expect(await refusal(storage.namespaces.createGroup(newGroup('jsmith'), []))).toEqual({ field: 'path', code: 'taken', message: '"jsmith" is already a username' });
    expect(await storage.namespaces.groupByPath('jsmith')).toBeUndefined();
  });

  it("creates a project in a group's or a user's namespace, spelt as stored, and finds it by id and by full path whatever the case", async () => {
    const { storages: [storage] } = await open(name);
    await storage.users.create(newUser('JSmith'));
    const acme = await storage.namespaces.createGroup(newGroup('Acme'), []);
    const widgets = await storage.namespaces.createProject(newProject('ACME', 'Widgets'), []);
    expect(withoutMembers(widgets)).toEqual({ id: expect.any(Number), namespace: 'Acme', path: 'Widgets', name: 'The Widgets', visibility: 'internal', group_id: acme.id, created_at: created });
    const dotfiles = await storage.namespaces.createProject(newProject('jsmith', 'dotfiles'), []);
    expect(withoutMembers(dotfiles)).toEqual({ id: expect.any(Number), namespace: 'JSmith', path: 'dotfiles', name: 'The dotfiles', visibility: 'internal', group_id: null, created_at: created });
    expect(withoutMembers(await storage.namespaces.projectById(widgets.id))).toEqual(withoutMembers(widgets));
    expect(withoutMembers(await storage.namespaces.projectByFullPath('acme/WIDGETS'))).toEqual(withoutMembers(widgets));
    expect(withoutMembers(await storage.namespaces.projectByFullPath('JSMITH/Dotfiles'))).toEqual(withoutMembers(dotfiles));
    expect(await storage.namespaces.projectByFullPath('acme/dotfiles')).toBeUndefined();
    expect(await storage.namespaces.projectById(Number.NaN)).toBeUndefined();
    expect(await refusal(storage.namespaces.createProject(newProject('nobody', 'x'), []))).toEqual({ field: 'namespace', code: 'unknown', message: `"nobody" is neither a group's path nor a username` });
    expect(await refusal(storage.namespaces.createProject(newProject('acme', 'widgets'), []))).toEqual({ field: 'path', code: 'taken', message: 'the project "Acme/widgets" already exists' });
  });

  it("answers a user's access to a project (direct, through its group) and to a group (direct, in one of its projects)", async () => {
    const { storages: [storage] } = await open(name);
    const [owner, developer, guest, outsider] = await Promise.all(['owner', 'developer', 'guest', 'outsider'].map((u) => storage.users.create(newUser(u))));
    const acme = await storage.namespaces.createGroup(newGroup('acme'), [
      { user_id: owner!.id, access_level: 50 },
      { user_id: guest!.id, access_level: 10 },
    ]);
    const widgets = await storage.namespaces.createProject(newProject('acme', 'widgets'), [
      { user_id: developer!.id, access_level: 30 },
      { user_id: guest!.id, access_level: 20 },
      // Listed twice: the first entry counts.
      { user_id: developer!.id, access_level: 40 },
    ]);
    const dotfiles = await storage.namespaces.createProject(newProject('owner', 'dotfiles'), [{ user_id: outsider!.id, access_level: 30 }]);
    const { projectAccess, groupAccess } = storage.namespaces;
    expect(await projectAccess(developer!.id, widgets)).toEqual({ direct: 30, inherited: null });
    expect(await projectAccess(owner!.id, widgets)).toEqual({ direct: null, inherited: 50 });
    expect(await projectAccess(guest!.id, widgets)).toEqual({ direct: 20, inherited: 10 });
    expect(await projectAccess(outsider!.id, widgets)).toEqual({ direct: null, inherited: null });
    expect(await projectAccess(outsider!.id, dotfiles)).toEqual({ direct: 30, inherited: null });
    expect(await projectAccess(owner!.id, dotfiles)).toEqual({ direct: null, inherited: null });
    expect(await groupAccess(developer!.id, acme)).toEqual({ direct: null, inAProject: true });
    expect(await groupAccess(owner!.id, acme)).toEqual({ direct: 50, inAProject: false });
    expect(await groupAccess(guest!.id, acme)).toEqual({ direct: 10, inAProject: true });
    expect(await groupAccess(outsider!.id, acme)).toEqual({ direct: null, inAProject: false });

    // The same standing found with the namespace, by id or by path in any case; nothing for an unknown one.
    const { projectWithAccess, groupWithAccess } = storage.namespaces;
    for (const ref of [{ id: widgets.id }, { path: 'ACME/Widgets' }]) {
      const found = await projectWithAccess(ref, guest!.id);
      expect(withoutMembers(found!.project)).toEqual(withoutMembers(widgets));
      expect(found!.access).toEqual({ direct: 20, inherited: 10 });
    }
    expect((await projectWithAccess({ path: 'owner/dotfiles' }, owner!.id))!.access).toEqual({ direct: null, inherited: null });
    for (const ref of [{ id: acme.id }, { path: 'Acme' }]) {
      const found = await groupWithAccess(ref, developer!.id);
      expect(withoutMembers(found!.group)).toEqual(withoutMembers(acme));
      expect(found!.access).toEqual({ direct: null, inAProject: true });
    }
    expect((await groupWithAccess({ id: acme.id }, outsider!.id))!.access).toEqual({ direct: null, inAProject: false });
    for (const ref of [{ id: 9999 }, { id: 1.5 }, { path: 'acme/nothing' }, { path: 'acme' }]) expect(await projectWithAccess(ref, owner!.id)).toBeUndefined();
    for (const ref of [{ id: 9999 }, { path: 'nothing' }]) expect(await groupWithAccess(ref, owner!.id)).toBeUndefined();
  });

  it("lists a user's direct group memberships with their levels, in the groups' order, and none through a project", async () => {
    const { storages: [storage] } = await open(name);
    const [ada, bob] = await Promise.all(['ada', 'bob'].map((u) => storage.users.create(newUser(u))));
    const zeta = await storage.namespaces.createGroup(newGroup('Zeta'), [{ user_id: ada!.id, access_level: 30 }]);
    await storage.namespaces.createGroup(newGroup('alpha'), [{ user_id: bob!.id, access_level: 50 }]);
    await storage.namespaces.createGroup(newGroup('omega'), [{ user_id: ada!.id, access_level: 50 }]);
    await storage.namespaces.createProject(newProject('alpha', 'tool'), [{ user_id: ada!.id, access_level: 40 }]);
    expect(await storage.namespaces.groupMembershipsOf(ada!.id)).toEqual([
      { path: 'Zeta', access_level: 30 },
      { path: 'omega', access_level: 50 },
    ]);
    await storage.namespaces.setMembership({ groupId: zeta.id }, ada!.id, 40);
    expect((await storage.namespaces.groupMembershipsOf(ada!.id))[0]).toEqual({ path: 'Zeta', access_level: 40 });
    expect(await storage.namespaces.groupMembershipsOf(9999)).toEqual([]);
  });

  it("answers every group and project with a user's standing, in the ids' order, narrowed by a search in any case", async () => {
    const { storages: [storage] } = await open(name);
    const [ada, bob] = await Promise.all(['ada', 'bob'].map((u) => storage.users.create(newUser(u))));
    const zeta = await storage.namespaces.createGroup(newGroup('Zeta'), [{ user_id: ada!.id, access_level: 30 }]);
    const alpha = await storage.namespaces.createGroup(newGroup('alpha'), []);
    const tool = await storage.namespaces.createProject(newProject('alpha', 'tool'), [{ user_id: ada!.id, access_level: 40 }]);
    const kit = await storage.namespaces.createProject(newProject('Zeta', '100%_kit'), []);

    const groups = await storage.namespaces.groupsWithAccess(ada!.id);
    expect(groups.map(({ group, access }) => [group.id, access])).toEqual([
      [zeta.id, { direct: 30, inAProject: false }],
      [alpha.id, { direct: null, inAProject: true }],
    ]);
    expect((await storage.namespaces.groupsWithAccess(bob!.id)).map(({ access }) => access)).toEqual([
      { direct: null, inAProject: false },
      { direct: null, inAProject: false },
    ]);
    expect((await storage.namespaces.groupsWithAccess(ada!.id, 'ZE')).map(({ group }) => group.path)).toEqual(['Zeta']);
    // The name counts as the path does ("The alpha").
    expect((await storage.namespaces.groupsWithAccess(ada!.id, 'the ALP')).map(({ group }) => group.path)).toEqual(['alpha']);

    const projects = await storage.namespaces.projectsWithAccess(ada!.id);
    expect(projects.map(({ project, access }) => [project.id, access])).toEqual([
      [tool.id, { direct: 40, inherited: null }],
      [kit.id, { direct: null, inherited: 30 }],
    ]);
    // A search is text, not a pattern: `%` and `_` match themselves only.
    expect((await storage.namespaces.projectsWithAccess(ada!.id, '0%_k')).map(({ project }) => project.path)).toEqual(['100%_kit']);
    expect(await storage.namespaces.projectsWithAccess(ada!.id, '%')).toHaveLength(1);
    expect(await storage.namespaces.projectsWithAccess(ada!.id, 'nothing')).toEqual([]);
  });

  // PostgreSQL answers what is asked in one turn from one statement (store/postgres/batch.ts): each caller must still
  // get its own answer, whatever else shares the statement.
  it('answers credentials, applications and namespaces asked all at once, each caller its own', async () => {
    const { storages: [storage] } = await open(name);
    const users = await Promise.all(Array.from({ length: 40 }, (_, i) => storage.users.create(newUser(`user${i}`))));
    for (const user of users) {
      await storage.tokens.issue(newPair(`of-${user.username}`, null, user.id));
      await storage.personalAccessTokens.create(newToken(user.id, `pat-of-${user.username}`));
    }
    const acme = await storage.namespaces.createGroup(newGroup('acme'), [{ user_id: users[0]!.id, access_level: 50 }]);
    const widgets = await storage.namespaces.createProject(newProject('acme', 'widgets'), [{ user_id: users[1]!.id, access_level: 30 }]);
    const applications = await Promise.all(users.slice(0, 5).map((user) => storage.applications.create(newApplication(user.id, `app-of-${user.username}`))));
    // Every user's token and personal access token, one of them twice, and two that do not exist, all at once.
    const asked = [...users.map((user) => user.username), 'user7', 'nobody'];
    const [tokens, personal, projects, groups] = await Promise.all([
      Promise.all(asked.map((name) => storage.tokens.withUserByAccessDigest(`access-of-${name}`))),
      Promise.all(asked.map((name) => storage.personalAccessTokens.withUserByDigest(`pat-of-${name}`))),
      Promise.all(users.slice(0, 3).flatMap((user) => [{ id: widgets.id }, { path: 'ACME/widgets' }, { id: 9999 }].map((ref) => storage.namespaces.projectWithAccess(ref, user.id)))),
      Promise.all(users.slice(0, 3).flatMap((user) => [{ id: acme.id }, { path: 'acme' }].map((ref) => storage.namespaces.groupWithAccess(ref, user.id)))),
    ]);
    const [byUid, byId] = await Promise.all([
      Promise.all([...applications.map((app) => app.uid), 'app-of-user2', 'app-of-nobody'].map((uid) => storage.applications.byUid(uid))),
      Promise.all([...applications.map((app) => app.id), 9999].map((id) => storage.applications.byId(id))),
    ]);
    expect(byUid.map((app) => app?.owner_id ?? null)).toEqual([...users.slice(0, 5).map((user) => user.id), users[2]!.id, null]);
    expect(byId).toEqual([...applications, undefined]);
    const [usersById, byAccess, byRefresh] = await Promise.all([
      Promise.all([...users.map((user) => user.id), 9999].map((id) => storage.users.byId(id))),
      Promise.all(asked.map((name) => storage.tokens.byAccessDigest(`access-of-${name}`))),
      Promise.all(asked.map((name) => storage.tokens.byRefreshDigest(`refresh-of-${name}`))),
    ]);
    expect(usersById).toEqual([...users, undefined]);
    for (const found of [byAccess, byRefresh]) expect(found.map((token) => token?.id ?? null)).toEqual([...users.map((user) => `of-${user.username}`), 'of-user7', null]);
    expect(tokens.map((found) => found?.user.username ?? null)).toEqual([...users.map((user) => user.username), 'user7', null]);
    expect(tokens.slice(0, 40).map((found) => found!.token.token_digest)).toEqual(users.map((user) => `access-of-${user.username}`));
    expect(personal.map((found) => found?.user.username ?? null)).toEqual([...users.map((user) => user.username), 'user7', null]);
    expect(projects.map((found) => found && found.access)).toEqual([
      ...[{ direct: null, inherited: 50 }, { direct: null, inherited: 50 }, undefined],
      ...[{ direct: 30, inherited: null }, { direct: 30, inherited: null }, undefined],
      ...[{ direct: null, inherited: null }, { direct: null, inherited: null }, undefined],
    ]);
    expect(groups.map((found) => found!.access)).toEqual([
      ...[{ direct: 50, inAProject: false }, { direct: 50, inAProject: false }],
      ...[{ direct: null, inAProject: true }, { direct: null, inAProject: true }],
      ...[{ direct: null, inAProject: false }, { direct: null, inAProject: false }],
    ]);
  });

  it("adds a membership to a group or project, changes its level, one per user, as projectAccess, groupAccess and the audience read it", async () => {
    const { storages: [storage] } = await open(name);
    const [owner, developer, guest] = await Promise.all(['owner', 'developer', 'guest'].map((u) => storage.users.create(newUser(u))));
    const acme = await storage.namespaces.createGroup({ path: 'acme', name: 'Acme', visibility: 'private', created_at: now }, [{ user_id: owner!.id, access_level: 50 }]);
    const project = (path: string) => ({ namespace: 'acme', path, name: path, visibility: 'private' as const, created_at: now });
    // Listed twice: the first entry counts until the membership is set.
    const widgets = await storage.namespaces.createProject(project('widgets'), [
      { user_id: developer!.id, access_level: 30 },
      { user_id: developer!.id, access_level: 40 },
    ]);
    const dotfiles = await storage.namespaces.createProject({ ...project('dotfiles'), namespace: 'owner' }, []);
    const { setMembership, projectAccess, groupAccess } = storage.namespaces;

    await setMembership({ groupId: acme.id }, guest!.id, 10);
    expect(await groupAccess(guest!.id, acme)).toEqual({ direct: 10, inAProject: false });
    expect(await projectAccess(guest!.id, widgets)).toEqual({ direct: null, inherited: 10 });
    await setMembership({ groupId: acme.id }, guest!.id, 20);
    expect(await groupAccess(guest!.id, acme)).toEqual({ direct: 20, inAProject: false });
    await setMembership({ groupId: acme.id }, owner!.id, 40);
    expect(await groupAccess(owner!.id, acme)).toEqual({ direct: 40, inAProject: false });

    await setMembership({ projectId: widgets.id }, developer!.id, 20);
    expect(await projectAccess(developer!.id, widgets)).toEqual({ direct: 20, inherited: null });
    await setMembership({ projectId: widgets.id }, guest!.id, 30);
    expect(await projectAccess(guest!.id, widgets)).toEqual({ direct: 30, inherited: 20 });
    expect(await groupAccess(guest!.id, acme)).toEqual({ direct: 20, inAProject: true });
    await setMembership({ projectId: dotfiles.id }, guest!.id, 40);
    expect(await projectAccess(guest!.id, dotfiles)).toEqual({ direct: 40, inherited: null });
    expect((await storage.namespaces.projectWithAccess({ path: 'acme/widgets' }, developer!.id))!.access).toEqual({ direct: 20, inherited: null });

    const audience = (await storage.recipients.audience(widgets.id, []))!;
    expect([...audience.interested].sort()).toEqual([owner!.id, developer!.id, guest!.id].sort());
    expect(audience.members.get(developer!.id)!.access).toEqual({ direct: 20, inherited: null });
    expect(audience.members.get(guest!.id)!.access).toEqual({ direct: 30, inherited: 20 });
  });

  it('sets a membership in a long member list', async () => {
    const { storages: [storage] } = await open(name);
    const users = [];
    for (let i = 0; i < 40; i++) users.push(await storage.users.create(newUser(`member${i}`)));
    await storage.users.create(newUser('owner'));
    const project = await storage.namespaces.createProject(
      { namespace: 'owner', path: 'big', name: 'big', visibility: 'private', created_at: now },
      users.map((u) => ({ user_id: u.id, access_level: 20 })),
    );
    expect(await storage.namespaces.projectAccess(users[7]!.id, project)).toEqual({ direct: 20, inherited: null });
    await storage.namespaces.setMembership({ projectId: project.id }, users[7]!.id, 40);
    expect(await storage.namespaces.projectAccess(users[7]!.id, project)).toEqual({ direct: 40, inherited: null });
    expect(await storage.namespaces.projectAccess(users[8]!.id, project)).toEqual({ direct: 20, inherited: null });
  });

  it('refuses an unknown user, group or project, changing nothing', async () => {
    const { storages: [storage] } = await open(name);
    const user = await storage.users.create(newUser('owner'));
    const group = await storage.namespaces.createGroup({ path: 'acme', name: 'Acme', visibility: 'private', created_at: now }, []);
    const project = await storage.namespaces.createProject({ namespace: 'acme', path: 'widgets', name: 'w', visibility: 'private', created_at: now }, []);
    const { setMembership } = storage.namespaces;
    expect(await refusal(setMembership({ groupId: 9999 }, user.id, 30))).toEqual({ field: 'group_id', code: 'unknown', message: 'there is no group with id 9999' });
    expect(await refusal(setMembership({ projectId: 9999 }, user.id, 30))).toEqual({ field: 'project_id', code: 'unknown', message: 'there is no project with id 9999' });
    expect(await refusal(setMembership({ groupId: group.id }, 9999, 30))).toEqual({ field: 'user_id', code: 'unknown', message: 'there is no user with id 9999' });
    expect(await refusal(setMembership({ projectId: project.id }, 9999, 30))).toEqual({ field: 'user_id', code: 'unknown', message: 'there is no user with id 9999' });
    expect(await storage.namespaces.projectAccess(user.id, project)).toEqual({ direct: null, inherited: null });
  });
});

describe('namespaces on PostgreSQL from two instances at once', () => {
  it('lets one of ten creations of one group path win', async () => {
    const both = await instances();
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => both[i % 2]!.namespaces.createGroup(newGroup(i % 2 ? 'crew' : 'CREW'), [])));
    expect(outcomes(results)).toEqual({ won: 1, refused: Array(9).fill('path taken') });
  });

  it('lets either a user or a group of one name win when both are created at once, never both', async () => {
    const [a, b] = await instances();
    for (let round = 0; round < 20; round++) {
      const name = `clash${round}`;
      const [user, group] = round % 2 ? [a, b] : [b, a];
      const results = await Promise.allSettled([user.users.create(newUser(name)), group.namespaces.createGroup(newGroup(name.toUpperCase()), [])]);
      const { won, refused } = outcomes(results);
      expect({ round, won, refused }).toEqual({ round, won: 1, refused: [expect.stringMatching(/^(username|path) taken$/)] });
      expect([await a.users.byUsername(name), await a.namespaces.groupByPath(name)].filter(Boolean)).toHaveLength(1);
    }
  });
});
