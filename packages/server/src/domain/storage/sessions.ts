// Browser sessions as the session middleware asks for them: by the digest of the session id (the id in the cookie
// is a bearer credential and is never stored), with an expiry in epoch milliseconds. Two implementations: the file
// store's `sessions` collection, and PostgreSQL's `sessions` table, shared by every instance on the database.
import type { SessionRecord } from './records.js';

export type StoredSession = SessionRecord['session'];

export interface SessionStorage {
  /** The session, unless it is unknown or expired at `nowMs`. */
  find(sidDigest: string, nowMs: number): Promise<StoredSession | null>;
  /** Creates or replaces the session. */
  save(sidDigest: string, session: StoredSession, expiresMs: number): Promise<void>;
  /** Replaces the cookie of an existing session and pushes its expiry back; a no-op for an unknown one. */
  refresh(sidDigest: string, cookie: unknown, expiresMs: number): Promise<void>;
  remove(sidDigest: string): Promise<void>;
  /** Ends every session of the user, signed in or halfway through a two-factor sign-in; answers how many. */
  endAllOf(userId: number): Promise<number>;
}
