// Browser sessions for the pages: express-session with the cookie the document's `sessionCookie` scheme names,
// kept in the store's `sessions` collection so a restart does not sign everyone out, and csrf-sync's
// synchronizer tokens bound to them.
import { csrfSync } from 'csrf-sync';
import type { Request, RequestHandler } from 'express';
import session from 'express-session';
import { digest } from '../domain/secrets.js';
import type { Store } from '../store/file-store.js';
import type { SessionRecord } from '../store/schema.js';

declare module 'express-session' {
  interface SessionData {
    /** The signed-in user; absent until sign-in. */
    userId?: number;
    /** A two-factor sign-in whose password was right, waiting for its code until `until` (epoch seconds). */
    twoFactor?: { userId: number; until: number };
  }
}

export const sessionCookieName = 'tokenbell.sid';
/** Idle lifetime: every page served to a session pushes its end this far ahead again (rolling). */
export const sessionMaxAgeMs = 8 * 60 * 60 * 1000;

/**
 * An express-session store persisting sessions in the lowdb store; expired ones are never answered. Records are
 * keyed by the digest of the session id, so a copy of the data file signs nobody in.
 */
export class StoreSessionStore extends session.Store {
  constructor(private readonly store: Store) {
    super();
  }

  override get(sid: string, callback: (err: unknown, session?: session.SessionData | null) => void): void {
    const record = this.store.lookup('sessions', 'sid', digest(sid));
    if (!record || record.expires <= Date.now()) {
      callback(null, null);
      return;
    }
    // A copy: express-session changes the object it gets, and the store may be changed only inside `commit`.
    callback(null, structuredClone(record.session) as unknown as session.SessionData);
  }

  override set(sid: string, data: session.SessionData, callback?: (err?: unknown) => void): void {
    const serialised = JSON.parse(JSON.stringify(data)) as SessionRecord['session'];
    const expires = expiryOf(data);
    const key = digest(sid);
    this.#commit(() => {
      const record = this.store.lookup('sessions', 'sid', key);
      if (record) {
        this.store.update('sessions', record, { session: serialised, expires });
      } else {
        this.store.insert('sessions', { sid: key, session: serialised, expires });
      }
    }, callback);
  }

  override touch(sid: string, data: session.SessionData, callback?: (err?: unknown) => void): void {
    const record = this.store.lookup('sessions', 'sid', digest(sid));
    if (!record) {
      callback?.();
      return;
    }
    const expires = expiryOf(data);
    this.#commit(() => {
      const session = { ...record.session, cookie: JSON.parse(JSON.stringify(data.cookie)) as unknown };
      this.store.update('sessions', record, { session, expires });
    }, callback);
  }

  override destroy(sid: string, callback?: (err?: unknown) => void): void {
    this.#commit(() => {
      const key = digest(sid);
      this.store.remove('sessions', (s) => s.sid === key);
    }, callback);
  }

  #commit(mutate: () => void, callback?: (err?: unknown) => void): void {
    this.store.commit(mutate).then(
      () => callback?.(),
      (error: unknown) => callback?.(error),
    );
  }
}

function expiryOf(data: session.SessionData): number {
  const expires = data.cookie?.expires;
  const at = expires ? new Date(expires).getTime() : NaN;
  return Number.isFinite(at) ? at : Date.now() + sessionMaxAgeMs;
}

export function sessionMiddleware(store: Store, secureCookies: boolean): RequestHandler {
  return session({
    name: sessionCookieName,
    secret: store.data.secrets.sessionKey,
    store: new StoreSessionStore(store),
    resave: false,
    // No cookie and no record until a page has something to keep (a CSRF token or a user).
    saveUninitialized: false,
    rolling: true,
    cookie: { httpOnly: true, sameSite: 'lax', secure: secureCookies, path: '/', maxAge: sessionMaxAgeMs },
  });
}

const csrf = csrfSync({
  getTokenFromRequest: (req) => {
    const token = (req.body as Record<string, unknown> | undefined)?._csrf;
    return typeof token === 'string' ? token : undefined;
  },
});

/** Rejects a state-changing request whose `_csrf` field is not the session's token, with a 403. */
export const csrfProtection: RequestHandler = csrf.csrfSynchronisedProtection;

/** The session's CSRF token for the forms of the page being rendered; makes one if the session has none. */
export const csrfToken = (req: Request): string => csrf.generateToken(req);

/** The signed-in user's id, or undefined. */
export const sessionUserId = (req: Request): number | undefined => req.session?.userId;

const promisify = (run: (done: (err?: unknown) => void) => void) =>
  new Promise<void>((resolve, reject) => run((err) => (err ? reject(err) : resolve())));

/** Signs `userId` in under a new session id, so an id planted before sign-in is worth nothing after it. */
export async function startSignedInSession(req: Request, userId: number): Promise<void> {
  await promisify((done) => req.session.regenerate(done));
  req.session.userId = userId;
  await promisify((done) => req.session.save(done));
}

export async function endSession(req: Request): Promise<void> {
  if (req.session) await promisify((done) => req.session.destroy(done));
}
