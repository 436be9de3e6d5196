// The applications a user has let into their account (through the authorization code flow), and taking that back.
import type { Store } from '../store/file-store.js';
import type { AccessTokenRecord, ApplicationRecord, EpochSeconds, Scope } from '../store/schema.js';
import { scopes as knownScopes } from '../openapi/document.js';
import { isExpired } from './oauth/tokens.js';

export interface AuthorizedApplication {
  /**
   * The application, or null for the tokens the password grant issued without client credentials (spec 4.2): they
   * belong to no application, and the user sees and revokes them as one entry.
   */
  application: ApplicationRecord | null;
  /** Every scope any of the live tokens carries, in the document's order. */
  scopes: Scope[];
  /** When the oldest live token was issued. */
  since: EpochSeconds;
}

/** A token still grants access while it is not revoked and either unexpired or renewable through its refresh token. */
const grantsAccess = (token: AccessTokenRecord, now: EpochSeconds) =>
  token.revoked_at === null && (!isExpired(token, now) || token.refreshDigest !== null);

/** The applications holding live tokens for the user, by name, then the password grant's tokens, if any. */
export function authorizedApplications(store: Store, userId: number, now: EpochSeconds): AuthorizedApplication[] {
  const byApplication = new Map<number | null, { scopes: Set<Scope>; since: EpochSeconds }>();
  for (const token of store.data.accessTokens) {
    if (token.user_id !== userId || !grantsAccess(token, now)) continue;
    const entry = byApplication.get(token.application_id) ?? { scopes: new Set<Scope>(), since: token.created_at };
    token.scopes.forEach((s) => entry.scopes.add(s));
    entry.since = Math.min(entry.since, token.created_at);
    byApplication.set(token.application_id, entry);
  }
  const result: AuthorizedApplication[] = [];
  for (const [id, entry] of byApplication) {
    const application = id === null ? null : store.lookup('applications', 'id', id);
    if (application === undefined) continue;
    result.push({ application, scopes: knownScopes.filter((s) => entry.scopes.has(s)), since: entry.since });
  }
  // Applications by name (then id), the password grant's entry last.
  return result.sort((a, b) => {
    if (a.application === null || b.application === null) return Number(a.application === null) - Number(b.application === null);
    return a.application.name.localeCompare(b.application.name) || a.application.id - b.application.id;
  });
}

/**
 * Revokes every token the application (null: the password grant without a client) holds for the user and drops its
 * unused codes for the user, so nothing it already has or is about to exchange still works. False when the
 * application is unknown or holds nothing for the user.
 */
export async function revokeApplicationAuthorization(
  store: Store,
  userId: number,
  applicationId: number | null,
  now: EpochSeconds,
): Promise<boolean> {
  if (applicationId !== null && !store.lookup('applications', 'id', applicationId)) return false;
  const mine = (r: { user_id: number; application_id: number | null }) => r.user_id === userId && r.application_id === applicationId;
  const tokens = store.data.accessTokens.filter((t) => mine(t) && t.revoked_at === null);
  const hasCodes = store.data.authorizationCodes.some((c) => mine(c) && c.used_at === null && c.expires_at > now);
  if (tokens.length === 0 && !hasCodes) return false;
  await store.commit(() => {
    for (const token of tokens) store.update('accessTokens', token, { revoked_at: now });
    store.remove('authorizationCodes', mine);
  });
  return true;
}
