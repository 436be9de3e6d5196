import { describe, expect, it } from 'vitest';
import type { Visibility } from '../../src/domain/storage/records.js';
import {
  canSeeGroup,
  canSeeProject,
  findGroup,
  findProject,
  projectAccessLevel,
} from '../../src/domain/visibility.js';
import { memoryStoreOf } from '../../src/store/file/store.js';
import { fileStorage } from '../../src/store/file/storage.js';
import type { GroupRecord, ProjectRecord, UserRecord } from '../../src/domain/storage/records.js';
import type { StoreData } from '../../src/store/file/schema.js';
import { DEVELOPER, GUEST, StoreBuilder, storageOf } from './fixtures.js';

/** The rule as the API asks it: the user's standing read from storage over `data`. */
const seesProject = (data: StoreData, user: UserRecord | null, project: ProjectRecord) =>
  canSeeProject(user, project, () => storageOf(data).namespaces.projectAccess(user!.id, project));
const seesGroup = (data: StoreData, user: UserRecord | null, group: GroupRecord) =>
  canSeeGroup(user, group, () => storageOf(data).namespaces.groupAccess(user!.id, group));
const levelOn = async (data: StoreData, userId: number, project: ProjectRecord) => projectAccessLevel(await storageOf(data).namespaces.projectAccess(userId, project));

type Who = 'project member' | 'group member' | 'member of another project in the group' | 'non-member' | 'anonymous' | 'admin' | 'blocked member' | 'blocked admin';

/** One group and two projects of the same visibility, and one user per relationship. */
function world(visibility: Visibility) {
  const b = new StoreBuilder();
  const group = b.group('acme', visibility);
  const project = b.project('widgets', visibility, group);
  const sibling = b.project('gadgets', visibility, group);
  const users = {
    'project member': b.user('pm'),
    'group member': b.user('gm'),
    'member of another project in the group': b.user('sib'),
    'non-member': b.user('stranger'),
    admin: b.user('root', { is_admin: true }),
    'blocked member': b.user('blocked', { state: 'blocked' }),
    'blocked admin': b.user('blockedroot', { state: 'blocked', is_admin: true }),
  };
  b.member(project, users['project member']);
  b.member(group, users['group member']);
  b.member(sibling, users['member of another project in the group']);
  b.member(project, users['blocked member']);
  b.member(group, users['blocked member']);
  const user = (who: Who) => (who === 'anonymous' ? null : users[who]);
  return { data: b.data, group, project, user };
}

describe('canSeeProject / canSeeGroup', () => {
  // [visibility, who, sees project, sees group]
  const table: [Visibility, Who, boolean, boolean][] = [
    ['public', 'project member', true, true],
    ['public', 'group member', true, true],
    ['public', 'member of another project in the group', true, true],
    ['public', 'non-member', true, true],
    ['public', 'anonymous', true, true],
    ['public', 'admin', true, true],
    ['public', 'blocked member', true, true],
    ['public', 'blocked admin', true, true],

    ['internal', 'project member', true, true],
    ['internal', 'group member', true, true],
    ['internal', 'member of another project in the group', true, true],
    ['internal', 'non-member', true, true],
    ['internal', 'anonymous', false, false],
    ['internal', 'admin', true, true],
    ['internal', 'blocked member', false, false],
    ['internal', 'blocked admin', false, false],

    ['private', 'project member', true, true],
    ['private', 'group member', true, true],
    ['private', 'member of another project in the group', false, true],
    ['private', 'non-member', false, false],
    ['private', 'anonymous', false, false],
    ['private', 'admin', true, true],
    ['private', 'blocked member', false, false],
    ['private', 'blocked admin', false, false],
  ];

  it.each(table)('%s, %s: project %s, group %s', async (visibility, who, project_, group_) => {
    const { data, group, project, user } = world(visibility);
    expect(await seesProject(data, user(who), project)).toBe(project_);
    expect(await seesGroup(data, user(who), group)).toBe(group_);
  });

  it('a private project in a personal namespace is seen by its members and admins only', async () => {
    const b = new StoreBuilder();
    const owner = b.user('owner');
    const other = b.user('other');
    const admin = b.user('root', { is_admin: true });
    const project = b.project('dotfiles', 'private', null, 'owner');
    b.member(project, owner);
    expect(await seesProject(b.data, owner, project)).toBe(true);
    expect(await seesProject(b.data, other, project)).toBe(false);
    expect(await seesProject(b.data, admin, project)).toBe(true);
  });
});

describe('membership', () => {
  it('counts direct and group membership, taking the higher access level', async () => {
    const b = new StoreBuilder();
    const group = b.group('acme');
    const project = b.project('widgets', 'private', group);
    const direct = b.user('direct');
    const viaGroup = b.user('viagroup');
    const both = b.user('both');
    const none = b.user('none');
    b.member(project, direct, GUEST).member(group, viaGroup, DEVELOPER).member(group, both, GUEST).member(project, both, DEVELOPER);

    expect(await levelOn(b.data, direct.id, project)).toBe(GUEST);
    expect(await levelOn(b.data, viaGroup.id, project)).toBe(DEVELOPER);
    expect(await levelOn(b.data, both.id, project)).toBe(DEVELOPER);
    expect(await levelOn(b.data, none.id, project)).toBeNull();
  });

  it('answers the same from a large stored member list (looked up through a table) as from a small one', async () => {
    const b = new StoreBuilder();
    const group = b.group('big');
    const project = b.project('crowd', 'private', group);
    const users = Array.from({ length: 200 }, (_, i) => b.user(`u${i}`));
    users.forEach((u, i) => b.member(project, u, i % 2 ? GUEST : DEVELOPER));
    // The first entry of a user listed twice counts, as in a short list.
    b.member(project, users[0]!, GUEST);
    const outsider = b.user('outsider');
    const store = memoryStoreOf(b.data);
    const stored = store.lookup('projects', 'id', project.id)!;
    expect(Object.isFrozen(stored.members)).toBe(true);
    const { namespaces } = fileStorage(store);
    for (const [i, u] of users.entries()) expect(projectAccessLevel(await namespaces.projectAccess(u.id, stored))).toBe(i % 2 ? GUEST : DEVELOPER);
    expect(projectAccessLevel(await namespaces.projectAccess(outsider.id, stored))).toBeNull();
  });
});

describe('findGroup / findProject', () => {
  const b = new StoreBuilder();
  const acme = b.group('acme');
  const digits = b.group('2016');
  const widgets = b.project('widgets', 'private', acme);
  const personal = b.project('Dotfiles', 'public', null, 'Alice');
  const { namespaces } = fileStorage(memoryStoreOf(b.data));

  it.each([
    ['id', String(acme.id), acme],
    ['path', 'acme', acme],
    ['path in another case', 'ACME', acme],
    ['all digits is an id, never a path', '2016', undefined],
    ['id of the all-digits group', String(digits.id), digits],
    ['unknown id', '999', undefined],
    ['unknown path', 'nope', undefined],
    ['empty', '', undefined],
  ])('group by %s', async (_name, idOrPath, expected) => {
    expect(await findGroup(namespaces, idOrPath)).toBe(expected);
  });

  it.each([
    ['id', String(widgets.id), widgets],
    ['full path', 'acme/widgets', widgets],
    ['full path in another case', 'Acme/WIDGETS', widgets],
    ['personal namespace path', 'alice/dotfiles', personal],
    ['bare project path without namespace', 'widgets', undefined],
    ['unknown id', '999', undefined],
    ['unknown path', 'acme/nope', undefined],
  ])('project by %s', async (_name, idOrPath, expected) => {
    expect(await findProject(namespaces, idOrPath)).toBe(expected);
  });
});
