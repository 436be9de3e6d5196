// Inserting a user, group, project, application or personal access token with its names checked first, inside the
// caller's commit: creating one record and seeding many go through these, so both refuse a taken name alike and
// before anything of theirs is written.
import { refusal, type NewGroupRow, type NewProjectRow, type NewUserRow } from '../../domain/storage/index.js';
import type { ApplicationRecord, GroupRecord, Membership, PersonalAccessTokenRecord, ProjectRecord, UserRecord } from './schema.js';
import type { Store } from './store.js';

export function insertUser(store: Store, user: NewUserRow): UserRecord {
  if (store.lookup('users', 'username', user.username)) throw refusal.username(user.username);
  // A project's namespace is a group path or a username, so the two must never be the same name.
  if (store.lookup('groups', 'path', user.username)) throw refusal.usernameIsGroup(user.username);
  checkAddresses(store, user);
  return store.insert('users', { id: store.nextId('users'), ...user });
}

/** The user's addresses, primary and secondary, are no other user's (nor twice this one's), whatever the case. */
export function checkAddresses(store: Store, user: NewUserRow): void {
  if (store.lookup('users', 'address', user.email)) throw refusal.email(user.email);
  const own = new Set([user.email.toLowerCase()]);
  for (const address of user.secondary_emails) {
    if (store.lookup('users', 'address', address) || own.has(address.toLowerCase())) {
      throw refusal.secondaryEmail(address);
    }
    own.add(address.toLowerCase());
  }
}

export function insertGroup(store: Store, group: NewGroupRow, members: readonly Membership[]): GroupRecord {
  if (store.lookup('groups', 'path', group.path)) throw refusal.group(group.path);
  if (store.lookup('users', 'username', group.path)) throw refusal.groupIsUsername(group.path);
  return store.insert('groups', { id: store.nextId('groups'), ...group, members: [...members] });
}

export function insertProject(store: Store, { namespace, ...project }: NewProjectRow, members: readonly Membership[]): ProjectRecord {
  const group = store.lookup('groups', 'path', namespace);
  const owner = group?.path ?? store.lookup('users', 'username', namespace)?.username;
  if (owner === undefined) throw refusal.unknownNamespace(namespace);
  const fullPath = `${owner}/${project.path}`;
  if (store.lookup('projects', 'fullPath', fullPath)) throw refusal.project(fullPath);
  return store.insert('projects', { id: store.nextId('projects'), namespace: owner, ...project, group_id: group?.id ?? null, members: [...members] });
}

export function insertApplication(store: Store, application: Omit<ApplicationRecord, 'id'>) {
  if (store.lookup('applications', 'uid', application.uid)) throw refusal.uid(application.uid);
  return store.insert('applications', { id: store.nextId('applications'), ...application });
}

export function insertPersonalAccessToken(store: Store, token: Omit<PersonalAccessTokenRecord, 'id'>) {
  if (store.lookup('personal_access_tokens', 'token_digest', token.token_digest)) throw refusal.token();
  return store.insert('personal_access_tokens', { id: store.nextId('personal_access_tokens'), ...token });
}
