// Inserting a user, group, project, application or personal access token with its names checked first, inside the
// caller's commit: creating one record and seeding many go through these, so both refuse a taken name alike and
// before anything of theirs is written.
import { InputError } from '../../explained-error.js';
import type { NewGroupRow, NewProjectRow, NewUserRow } from '../../domain/storage/index.js';
import { taken } from './refusals.js';
import type { ApplicationRecord, GroupRecord, Membership, PersonalAccessTokenRecord, ProjectRecord, UserRecord } from './schema.js';
import type { Store } from './store.js';

export function insertUser(store: Store, user: NewUserRow): UserRecord {
  if (store.lookup('users', 'username', user.username)) throw taken('username', `the username ${JSON.stringify(user.username)} is already taken`);
  // A project's namespace is a group path or a username, so the two must never be the same name.
  if (store.lookup('groups', 'path', user.username)) throw taken('username', `the username ${JSON.stringify(user.username)} is already a group's path`);
  checkAddresses(store, user);
  return store.insert('users', { id: store.nextId('users'), ...user });
}

/** The user's addresses, primary and secondary, are no other user's (nor twice this one's), whatever the case. */
export function checkAddresses(store: Store, user: NewUserRow): void {
  if (store.lookup('users', 'address', user.email)) throw taken('email', `the e-mail address ${JSON.stringify(user.email)} is already in use`);
  const own = new Set([user.email.toLowerCase()]);
  for (const address of user.secondary_emails) {
    if (store.lookup('users', 'address', address) || own.has(address.toLowerCase())) {
      throw taken('secondary_emails', `the e-mail address ${JSON.stringify(address)} is already in use`);
    }
    own.add(address.toLowerCase());
  }
}

export function insertGroup(store: Store, group: NewGroupRow, members: readonly Membership[]): GroupRecord {
  if (store.lookup('groups', 'path', group.path)) throw taken('path', `the group ${JSON.stringify(group.path)} already exists`);
  if (store.lookup('users', 'username', group.path)) throw taken('path', `${JSON.stringify(group.path)} is already a username`);
  return store.insert('groups', { id: store.nextId('groups'), ...group, members: [...members] });
}

export function insertProject(store: Store, { namespace, ...project }: NewProjectRow, members: readonly Membership[]): ProjectRecord {
  const group = store.lookup('groups', 'path', namespace);
  const owner = group?.path ?? store.lookup('users', 'username', namespace)?.username;
  if (owner === undefined) throw new InputError('namespace', `${JSON.stringify(namespace)} is neither a group's path nor a username`, 'unknown');
  const fullPath = `${owner}/${project.path}`;
  if (store.lookup('projects', 'fullPath', fullPath)) throw taken('path', `the project ${JSON.stringify(fullPath)} already exists`);
  return store.insert('projects', { id: store.nextId('projects'), namespace: owner, ...project, group_id: group?.id ?? null, members: [...members] });
}

export function insertApplication(store: Store, application: Omit<ApplicationRecord, 'id'>) {
  if (store.lookup('applications', 'uid', application.uid)) throw taken('uid', `the App ID ${JSON.stringify(application.uid)} is already taken`);
  return store.insert('applications', { id: store.nextId('applications'), ...application });
}

export function insertPersonalAccessToken(store: Store, token: Omit<PersonalAccessTokenRecord, 'id'>) {
  if (store.lookup('personal_access_tokens', 'token_digest', token.token_digest)) throw taken('token', 'this token is already in use');
  return store.insert('personal_access_tokens', { id: store.nextId('personal_access_tokens'), ...token });
}
