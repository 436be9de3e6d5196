// Browser sessions for the pages: express-session with the cookie the document's `sessionCookie` scheme names,
// kept in the store's `sessions` collection so a restart does not sign everyone out, and csrf-sync's
// synchronizer tokens bound to them.
//
// A session exists only from the right password on: the sign-in form (both its steps) is protected by a signed
// double-submit cookie (csrf-csrf) instead, so that visitors who have not signed in store nothing, however many
// arrive. A session ends after `idleSeconds` without a request and, whatever the activity, `lifetimeSeconds` after
// the sign-in; both are measured with the injected clock, like every other expiry.
import cookieParser from 'cookie-parser';
import { doubleCsrf } from 'csrf-csrf';
import { csrfSync } from 'csrf-sync';
import type { Request, RequestHandler, Response } from 'express';
import session from 'express-session';
import { digest } from '../domain/secrets.js';
import type { SessionStorage, StoredSession } from '../domain/storage/index.js';

declare module 'express-session' {
  interface SessionData {
    /** The signed-in user; absent until sign-in. */
    userId?: number;
    /** A two-factor sign-in whose password was right, waiting for its code until `until` (epoch seconds). */
    twoFactor?: { userId: number; until: number };
    /** When the session was signed in (epoch seconds): the absolute lifetime counts from here. */
    signedInAt?: number;
    /** The last request the session made (epoch seconds): the idle timeout counts from here. */
    seenAt?: number;
  }
}

export const sessionCookieName = 'tokenbell.sid';

export interface SessionLifetimes {
  /** A session that made no request for this long has ended. */
  idleSeconds: number;
  /** A session this long after its sign-in has ended, however active. */
  lifetimeSeconds: number;
}

/**
 * An express-session store persisting sessions in the lowdb store; expired ones are never answered. Records are
 * keyed by the digest of the session id, so a copy of the data file signs nobody in.
 */
export class StoreSessionStore extends session.Store {
  /** `nowMs`: the injected clock, in milliseconds; `idleMs`: how long a record outlives its last write. */
  constructor(
    private readonly storage: SessionStorage,
    private readonly nowMs: () => number,
    private readonly idleMs: number,
  ) {
    super();
  }

  override get(sid: string, callback: (err: unknown, session?: session.SessionData | null) => void): void {
    this.storage.find(digest(sid), this.nowMs()).then(
      (found) => callback(null, found as unknown as session.SessionData | null),
      (error: unknown) => callback(error),
    );
  }

  override set(sid: string, data: session.SessionData, callback?: (err?: unknown) => void): void {
    const serialised = JSON.parse(JSON.stringify(data)) as StoredSession;
    settle(this.storage.save(digest(sid), serialised, this.nowMs() + this.idleMs), callback);
  }

  override touch(sid: string, data: session.SessionData, callback?: (err?: unknown) => void): void {
    settle(this.storage.refresh(digest(sid), JSON.parse(JSON.stringify(data.cookie)) as unknown, this.nowMs() + this.idleMs), callback);
  }

  override destroy(sid: string, callback?: (err?: unknown) => void): void {
    settle(this.storage.remove(digest(sid)), callback);
  }
}

function settle(done: Promise<void>, callback?: (err?: unknown) => void): void {
  done.then(
    () => callback?.(),
    (error: unknown) => callback?.(error),
  );
}

/** Where sessions live and the key that signs their cookie: per instance on the file store, shared on PostgreSQL. */
export interface SessionBacking {
  storage: SessionStorage;
  secret: string;
}


export function sessionMiddleware({ storage, secret }: SessionBacking, secureCookies: boolean, now: () => number, lifetimes: SessionLifetimes): RequestHandler[] {
  const handler = session({
    name: sessionCookieName,
    secret,
    store: new StoreSessionStore(storage, () => now() * 1000, lifetimes.idleSeconds * 1000),
    resave: false,
    // No cookie and no record until a page has something to keep (a user, or a two-factor sign-in half done).
    saveUninitialized: false,
    rolling: true,
    cookie: { httpOnly: true, sameSite: 'lax', secure: secureCookies, path: '/', maxAge: lifetimes.idleSeconds * 1000 },
  });
  return [handler, endExpiredSessions(now, lifetimes)];
}

/** Ends a session past its idle timeout or its lifetime, on the injected clock; notes the request otherwise. */
function endExpiredSessions(now: () => number, { idleSeconds, lifetimeSeconds }: SessionLifetimes): RequestHandler {
  return (req, _res, next) => {
    const data = req.session;
    if (data.userId === undefined && data.twoFactor === undefined) return next();
    const at = now();
    const idle = data.seenAt !== undefined && at - data.seenAt >= idleSeconds;
    const old = data.signedInAt !== undefined && at - data.signedInAt >= lifetimeSeconds;
    if (idle || old) {
      // A fresh, empty session in its place (stored only if something is put in it): the visitor is signed out.
      data.regenerate((error) => next(error));
      return;
    }
    data.seenAt = at;
    // A session stored before sessions carried their sign-in time gets a lifetime from now on, not none.
    data.signedInAt ??= at;
    next();
  };
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

/** When the session's user signed in (OpenID Connect's `auth_time`), or undefined. */
export const sessionSignedInAt = (req: Request): number | undefined => (req.session?.userId === undefined ? undefined : req.session.signedInAt);

const promisify = (run: (done: (err?: unknown) => void) => void) =>
  new Promise<void>((resolve, reject) => run((err) => (err ? reject(err) : resolve())));

/** Signs `userId` in under a new session id, so an id planted before sign-in is worth nothing after it. */
export async function startSignedInSession(req: Request, userId: number, now: number): Promise<void> {
  await promisify((done) => req.session.regenerate(done));
  req.session.userId = userId;
  req.session.signedInAt = now;
  req.session.seenAt = now;
  await promisify((done) => req.session.save(done));
}

/** Keeps a two-factor sign-in's right password until the code comes: the first state stored for the visitor. */
export function startTwoFactorStep(req: Request, userId: number, now: number, stepSeconds: number): void {
  req.session.twoFactor = { userId, until: now + stepSeconds };
  req.session.signedInAt = now;
  req.session.seenAt = now;
}

export interface SignInCsrf {
  /** The cookie parser and the check for the sign-in form's posts. */
  protection: RequestHandler[];
  /** A token for the sign-in page's form; sets its cookie. */
  token(req: Request, res: Response): string;
}

/**
 * The sign-in form's CSRF protection without server state: a random value in an httpOnly cookie and, in the form,
 * an HMAC of it under the instance's key (csrf-csrf's signed double submit). It binds to no session, since the
 * visitor has none yet.
 */
export function signInCsrf(secret: string, secureCookies: boolean): SignInCsrf {
  const { doubleCsrfProtection, generateCsrfToken } = doubleCsrf({
    getSecret: () => secret,
    getSessionIdentifier: () => '',
    // __Host-: only this origin, over https, path / (RFC 6265bis), so a sibling subdomain cannot plant it.
    cookieName: secureCookies ? '__Host-tokenbell.csrf' : 'tokenbell.csrf',
    cookieOptions: { sameSite: 'lax', path: '/', secure: secureCookies, httpOnly: true },
    getCsrfTokenFromRequest: (req) => {
      const token = (req.body as Record<string, unknown> | undefined)?._csrf;
      return typeof token === 'string' ? token : undefined;
    },
  });
  return { protection: [cookieParser(), doubleCsrfProtection], token: (req, res) => generateCsrfToken(req, res) };
}

export async function endSession(req: Request): Promise<void> {
  if (req.session) await promisify((done) => req.session.destroy(done));
}
