// Seed fixtures: a whole set of users, groups, projects and applications, checked completely before anything is
// written (plan.ts), then applied at once (load.ts) so a bad fixture never leaves a half-seeded store.
import type { NewUser } from '../accounts.js';
import { ExplainedError } from '../../explained-error.js';
import type { Scope, Visibility } from '../storage/records.js';

/**
 * A seed fixture (JSON). Every list is optional; names are matched case-insensitively, as at sign-in.
 *
 * ```json
 * {
 *   "users": [{
 *     "username": "jsmith", "email": "jsmith@example.com", "secondary_emails": ["jane@work.example"],
 *     "name": "Jane Smith", "password": "at least 8 chars", (or "password_hash": "scrypt$...")
 *     "two_factor_enabled": false, "otp_secret": "base32, with two_factor_enabled", "is_admin": false, "bio": "optional",
 *     "personal_access_tokens": [{ "name": "laptop", "token": "tbpat-...", "scopes": ["api"], "expires_at": "2030-12-31" }]
 *   }],
 *   "groups": [{
 *     "path": "acme", "name": "Acme", "visibility": "private",
 *     "members": [{ "username": "jsmith", "access_level": 50 }]
 *   }],
 *   "projects": [{
 *     "namespace": "acme", "path": "widgets", "name": "Widgets", "visibility": "private",
 *     "members": [{ "username": "awong", "access_level": 30 }]
 *   }],
 *   "applications": [{
 *     "name": "Example App", "owner": "jsmith", "client_id": "...", "client_secret": "...",
 *     "redirect_uris": ["http://127.0.0.1:8080/callback"], "scopes": ["api", "read_user"]
 *   }]
 * }
 * ```
 *
 * - Usernames and e-mail addresses are unique; a group's path must not be a username (a project's namespace is
 *   one or the other).
 * - `secondary_emails` (optional) are a user's verified secondary addresses: the seed describes only verified ones,
 *   as there is no verification flow. With `email` they are the addresses the user owns, and the only ones their
 *   notification e-mail may be. Each is an address no other user has (primary or secondary), listed once, and not
 *   the user's own `email`.
 * - `access_level`: 10 guest, 20 reporter, 30 developer, 40 maintainer, 50 owner. Members name users of the
 *   fixture or already in the store.
 * - A project whose `namespace` is a group's path belongs to that group; otherwise `namespace` must be a username
 *   (the project lives in that user's namespace). `members` is optional.
 * - A user with `two_factor_enabled` signs in to the pages with a code from an authenticator app holding
 *   `otp_secret` (TOTP, SHA-1, 6 digits, 30 s); without one, such a user cannot sign in to the pages at all.
 * - An application with `"confidential": false` is a public client (a browser or native app): it has no
 *   `client_secret` and must use PKCE.
 * - Loaded again (the same fixture at every start), an entry the store has already is skipped when identical and
 *   refused by name when not; what an operator changes later is the store's (existing.ts, plan.ts).
 * - Plain secrets (passwords, tokens, client secrets) are only in the fixture: the store keeps scrypt hashes and
 *   SHA-256 digests. `expires_at` is the token's last valid day (UTC); `scopes` default to `["api"]`.
 * - A user has either `password` or `password_hash`, a hash as `tokenbell hash-password` prints it
 *   (`scrypt$N$r$p$salt$hash`), kept as given: a fixture that must not hold the password, or whose loading must not
 *   spend a hash's time. A hash with parameters below production's is replaced at the user's first sign-in.
 */
export interface SeedFixture {
  users?: SeedUser[];
  groups?: SeedGroup[];
  projects?: SeedProject[];
  applications?: SeedApplication[];
}

/** A new user's fields (accounts.ts), their password or its hash, and the personal access tokens to give them. */
export type SeedUser = Omit<NewUser, 'password'> &
  ({ password: string; password_hash?: never } | { password_hash: string; password?: never }) & {
    personal_access_tokens?: SeedPersonalAccessToken[];
  };

export interface SeedPersonalAccessToken {
  name: string;
  token: string;
  scopes?: Scope[];
  expires_at?: string | null;
}

export interface SeedMember {
  username: string;
  access_level: number;
}

export interface SeedGroup {
  path: string;
  name: string;
  visibility: Visibility;
  members?: SeedMember[];
}

export interface SeedProject {
  namespace: string;
  path: string;
  name: string;
  visibility: Visibility;
  members?: SeedMember[];
}

export interface SeedApplication {
  name: string;
  owner: string;
  client_id: string;
  /** Absent, and only absent, for a public client. */
  client_secret?: string;
  redirect_uris: string[];
  scopes?: Scope[];
  /** False for a public client (a browser or native app): no secret, PKCE required. Defaults to true. */
  confidential?: boolean;
}

/** A fixture that cannot be loaded; `problems` lists every bad entry, e.g. `users[2].email: ...`. */
export class SeedError extends ExplainedError {
  override name = 'SeedError';
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`the seed fixture was not loaded:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

export interface SeedSummary {
  users: number;
  personalAccessTokens: number;
  groups: number;
  projects: number;
  applications: number;
  /** Entries the store had already, identical, and so skipped. */
  unchanged: number;
}

