// How a name already taken is refused: the unique indexes decide (an insert that loses a race fails with a unique
// violation), and the violation becomes the same InputError the file store throws, word for word, whichever module
// inserted the row.
import { InputError } from '../../explained-error.js';

const UNIQUE_VIOLATION = '23505';
export const FOREIGN_KEY_VIOLATION = '23503';

export const quoted = (text: string) => JSON.stringify(text);

// The file store's refusals, word for word; a seed words a few of them its own way.
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
  unknownMember: (field: 'user_id' | 'group_id' | 'project_id', id: number) => new InputError(field, `there is no ${field.slice(0, -3)} with id ${id}`, 'unknown'),
};
export type Wording = 'create' | 'seed';

/** `statement`, with a violation (`violation`, an error code) of one of `refusals`' constraints thrown as that refusal. */
export async function refusing<T>(violation: string, statement: Promise<T>, refusals: Record<string, () => InputError>): Promise<T> {
  try {
    return await statement;
  } catch (error) {
    const { code, constraint } = error as { code?: string; constraint?: string };
    if (code === violation && constraint !== undefined && Object.hasOwn(refusals, constraint)) throw refusals[constraint]!();
    throw error;
  }
}

/** `statement`, with a unique violation of one of `refusals`' indexes thrown as that refusal. */
export const refusingTaken = <T>(statement: Promise<T>, refusals: Record<string, () => InputError>) => refusing(UNIQUE_VIOLATION, statement, refusals);
