// The applications a user has let into their account (through the authorization code flow), and taking that back.
import type { Storage } from './storage/index.js';
import type { AccessTokenRecord, ApplicationRecord, EpochSeconds, Scope } from './storage/records.js';
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
  token.revoked_at === null && (!isExpired(token, now) || token.refresh_digest !== null);

/** The applications holding live tokens for the user, by name, then the password grant's tokens, if any. */
export async function authorizedApplications(storage: Storage, userId: number, now: EpochSeconds): Promise<AuthorizedApplication[]> {
  const byApplication = new Map<number | null, { scopes: Set<Scope>; since: EpochSeconds }>();
  for (const token of await storage.tokens.unrevokedOfUser(userId)) {
    if (!grantsAccess(token, now)) continue;
    const entry = byApplication.get(token.application_id) ?? { scopes: new Set<Scope>(), since: token.created_at };
    token.scopes.forEach((s) => entry.scopes.add(s));
    entry.since = Math.min(entry.since, token.created_at);
    byApplication.set(token.application_id, entry);
  }
  const result: AuthorizedApplication[] = [];
  for (const [id, entry] of byApplication) {
    const application = id === null ? null : await storage.applications.byId(id);
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
  storage: Storage,
  userId: number,
  applicationId: number | null,
  now: EpochSeconds,
): Promise<boolean> {
  if (applicationId !== null && !(await storage.applications.byId(applicationId))) return false;
  return storage.tokens.revokeAuthorization(userId, applicationId, now);
}
