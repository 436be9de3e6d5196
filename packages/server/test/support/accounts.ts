// Creating one user outside a seed, for tests that need an account the example fixture does not have. Checks the
// fields and uniqueness as a seed does, hashes the password, and commits.
import { checkNewUserFields, checkUserIsNew, insertUser, type NewUser } from '../../src/domain/accounts.js';
import { hashPassword } from '../../src/domain/passwords.js';
import type { Store } from '../../src/store/file-store.js';
import type { UserRecord } from '../../src/store/schema.js';

export async function createUser(store: Store, input: NewUser): Promise<UserRecord> {
  checkNewUserFields(input);
  checkUserIsNew(store, input);
  const passwordHash = await hashPassword(input.password);
  return store.commit(() => insertUser(store, input, passwordHash));
}
