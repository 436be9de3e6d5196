// How a store refuses a change, word for word the same on every backend: a name already taken (each store decides it
// itself, so two instances racing for one name cannot both win) or a record that is not there. The store contract
// suite holds every backend to these words; a seed words a few of them its own way (a name taken by a group or a user
// alike reads as taken).
import { InputError } from '../../explained-error.js';

const quoted = (text: string) => JSON.stringify(text);
const taken = (field: string, message: string) => new InputError(field, message, 'taken');

export const refusal = {
  username: (username: string) => taken('username', `the username ${quoted(username)} is already taken`),
  usernameIsGroup: (username: string) => taken('username', `the username ${quoted(username)} is already a group's path`),
  email: (email: string) => taken('email', `the e-mail address ${quoted(email)} is already in use`),
  secondaryEmail: (email: string) => taken('secondary_emails', `the e-mail address ${quoted(email)} is already in use`),
  group: (path: string) => taken('path', `the group ${quoted(path)} already exists`),
  groupIsUsername: (path: string) => taken('path', `${quoted(path)} is already a username`),
  project: (fullPath: string) => taken('path', `the project ${quoted(fullPath)} already exists`),
  uid: (uid: string) => taken('uid', `the App ID ${quoted(uid)} is already taken`),
  token: () => taken('token', 'this token is already in use'),
  userCode: () => taken('user_code', 'this code is already in use'),
  unknownMember: (field: 'user_id' | 'group_id' | 'project_id', id: number) => new InputError(field, `there is no ${field.slice(0, -3)} with id ${id}`, 'unknown'),
  unknownNamespace: (namespace: string) => new InputError('namespace', `${quoted(namespace)} is neither a group's path nor a username`, 'unknown'),
  /** Text no store may hold, whatever the field: U+0000 or half of a surrogate pair (PostgreSQL's UTF-8 has neither). */
  text: () => new InputError('text', 'must not contain U+0000 or half of a surrogate pair'),
  unknownSeedUser: (username: string) => new InputError('username', `there is no user ${quoted(username)}`, 'unknown'),
};
