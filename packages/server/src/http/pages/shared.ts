// What every page router shares: the options, the answers (an HTML page, a bare redirect), where sign-in is and how
// to get back, the signed-in user, and how a refused form field reads.
import type { Request, Response } from 'express';
import type { LoginThrottle } from '../../domain/login-throttle.js';
import { activeUser } from '../../domain/users.js';
import type { InputError } from '../../explained-error.js';
import type { Storage } from '../../domain/storage/index.js';
import type { UserRecord } from '../../domain/storage/records.js';
import type { Viewer } from '../../pages/html.js';
import { HttpError } from '../errors.js';
import { signInPath } from './paths.js';
import { csrfToken, sessionUserId, type SessionBacking, type SessionLifetimes, type SignInCsrf } from '../session.js';

export interface PagesOptions {
  storage: Storage;
  now: () => number;
  codeTtl: number;
  secureCookies: boolean;
  throttle: LoginThrottle;
  sessionLifetimes: SessionLifetimes;
  /** The sign-in form's stateless CSRF protection (session.ts). */
  signInCsrf: SignInCsrf;
  /** Where sessions are kept and what signs their cookie. */
  sessions: SessionBacking;
  /** With test helpers on: the user the authorization page signs in and approves as (the test kit's), or null. */
  autoApproval?: () => string | null;
}

export { home, signInPath } from './paths.js';

/**
 * A 302 with only its Location, as the document describes redirects: Express's res.redirect would add a small
 * text or HTML body ("Found. Redirecting to ...") that the document does not have.
 */
export function redirect(res: Response, location: string): void {
  res.status(302).location(location).end();
}

export const html = (res: Response, status: number, page: string) => res.status(status).type('html').send(page);

/**
 * A `return_to` worth following: a path on this instance. `//host` and `/\host` are read by browsers as another
 * host, control characters are dropped by browsers before parsing (so `/\t/host` becomes `//host`), and anything
 * with a scheme is elsewhere; all of those are ignored.
 */
export function localPath(value: unknown): string | undefined {
  if (typeof value !== 'string' || !value.startsWith('/') || value.length > 4096) return undefined;
  if (/^\/[/\\]/.test(value) || /[\u0000-\u001f\u007f\\]/.test(value)) return undefined;
  const base = 'http://tokenbell.invalid';
  try {
    const url = new URL(value, base);
    return url.origin === base ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A query string the validator accepts: it refuses query values holding RFC 3986 reserved characters, "+" and
 * "(" included, so every one is percent-encoded (URLSearchParams would write "+" for a space).
 */
export const queryString = (params: Record<string, string>) =>
  Object.entries(params)
    .map(([k, v]) => `${k}=${encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`)
    .join('&');

export const signInLocation = (returnTo: string | undefined) => (returnTo ? `${signInPath}?${queryString({ return_to: returnTo })}` : signInPath);

export async function currentUser(storage: Storage, req: Request): Promise<UserRecord | undefined> {
  const id = sessionUserId(req);
  return id === undefined ? undefined : activeUser(storage.users, id);
}

/**
 * The signed-in user and their sign-out form's CSRF token, for the header of a page anyone may see; null when nobody
 * is signed in, undefined where the request's path reads no session.
 */
export async function viewerOf(storage: Storage, req: Request): Promise<Viewer> {
  if (req.session === undefined) return undefined;
  const user = await currentUser(storage, req);
  return user ? { user, csrf: csrfToken(req) } : null;
}

/** The signed-in user, or a redirect to sign in and back here (GET pages). */
export async function signedIn(storage: Storage, req: Request, res: Response): Promise<UserRecord | undefined> {
  const user = await currentUser(storage, req);
  if (!user) redirect(res, signInLocation(localPath(req.originalUrl)));
  return user;
}

/** For the form routes, which pageSessions has already sent to sign-in without a user. */
export async function userOf(storage: Storage, req: Request): Promise<UserRecord> {
  const user = await currentUser(storage, req);
  if (!user) throw new HttpError(403, 'Your session has ended. Sign in again.');
  return user;
}

export const asList = (value: unknown): string[] | undefined =>
  value === undefined ? undefined : (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');

const fieldLabels: Record<string, string> = {
  name: 'Name',
  redirect_uris: 'Redirect URIs',
  scopes: 'Scopes',
  expires_at: 'Expires at',
};
export const describeFieldError = (error: InputError) => `${fieldLabels[error.field] ?? error.field} ${error.message}.`;

