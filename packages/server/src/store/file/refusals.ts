// The file store's own refusals of a change: a name already taken, or a member that is not there. Creating a record and
// seeding one refuse alike, so each wording lives here once.
import { InputError } from '../../explained-error.js';

export const taken = (field: string, message: string) => new InputError(field, message, 'taken');

export const unknownMember = (field: 'user_id' | 'group_id' | 'project_id', id: number) =>
  new InputError(field, `there is no ${field.slice(0, -3)} with id ${id}`, 'unknown');
