// The one rule for whether an account may act: it exists and is not blocked. Sign-in, every token (OAuth, personal,
// refresh, codes), two-factor codes, visibility and mail recipients all ask here, so blocking a user takes effect
// everywhere at once.
import type { Store } from '../store/file-store.js';
import type { UserRecord } from '../store/schema.js';

export const isActive = (user: UserRecord | null | undefined): user is UserRecord => user != null && user.state === 'active';

/** The user with this id while they may act; undefined when unknown or blocked. */
export function activeUser(store: Store, id: number): UserRecord | undefined {
  const user = store.lookup('users', 'id', id);
  return isActive(user) ? user : undefined;
}
