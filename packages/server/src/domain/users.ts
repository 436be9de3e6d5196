// The one rule for whether an account may act: it exists and is not blocked. Sign-in, every token (OAuth, personal,
// refresh, codes), two-factor codes, visibility and mail recipients all ask here, so blocking a user takes effect
// everywhere at once.
import type { components } from '@tokenbell/sdk';
import type { UserStorage } from './storage/index.js';
import type { UserRecord } from './storage/records.js';
import { isoOf } from './time.js';

export const isActive = <U extends Pick<UserRecord, 'state'>>(user: U | null | undefined): user is U => user != null && user.state === 'active';

/** The user with this id while they may act; undefined when unknown or blocked. */
export async function activeUser(users: UserStorage, id: number): Promise<UserRecord | undefined> {
  const user = await users.byId(id);
  return isActive(user) ? user : undefined;
}

/** A user as the API shows them. */
export function presentUser(user: UserRecord, baseUrl: string): components['schemas']['User'] {
  return {
    id: user.id,
    username: user.username,
    name: user.name,
    email: user.email,
    state: user.state,
    avatar_url: null,
    web_url: `${baseUrl}/${encodeURIComponent(user.username)}`,
    created_at: isoOf(user.created_at),
    bio: user.bio,
    two_factor_enabled: user.two_factor_enabled,
    is_admin: user.is_admin,
  };
}

/**
 * Another user as the API shows them: the account itself and administrators see what the current-user call answers,
 * anyone else the service's basic fields (no e-mail address, no two-factor or administrator flag).
 */
export function presentUserTo(viewer: UserRecord, user: UserRecord, baseUrl: string): components['schemas']['User'] | components['schemas']['PublicUser'] {
  const full = presentUser(user, baseUrl);
  if (viewer.id === user.id || viewer.is_admin) return full;
  const { email: _email, two_factor_enabled: _twoFactor, is_admin: _admin, ...basic } = full;
  return basic;
}
