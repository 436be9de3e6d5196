// The browser-facing routes: sign-in and sign-out, the authorization endpoint's consent page, applications and
// personal access tokens. Handlers are thin: the rules live in the domain, the markup in src/pages.
import helmet from 'helmet';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { components } from '@tokenbell/sdk';
import { limits } from '../config.js';
import { createPersonalAccessToken, listPersonalAccessTokens, revokePersonalAccessToken } from '../domain/accounts.js';
import type { LoginThrottle } from '../domain/login-throttle.js';
import { deleteApplication, listApplications, registerApplication } from '../domain/applications.js';
import { authorizedApplications, revokeApplicationAuthorization } from '../domain/authorized-applications.js';
import {
  approveAuthorization,
  checkAuthorizationRequest,
  denyAuthorization,
  type AuthorizationRequest,
} from '../domain/oauth/authorization.js';
import { redirectUriWarnings } from '../domain/oauth/redirect-uris.js';
import { applicationCreatedPage, applicationsPage, type ApplicationFormState } from '../pages/applications.js';
import { serveStylesheet, stylesheetPath } from '../pages/assets.js';
import { consentPage } from '../pages/consent.js';
import { personalAccessTokensPage, tokenCreatedPage, type TokenFormState } from '../pages/personal-access-tokens.js';
import { signInPage, twoFactorPage } from '../pages/sign-in.js';
import { InputError } from '../explained-error.js';
import type { Store } from '../store/file-store.js';
import type { Scope, UserRecord } from '../store/schema.js';
import { ApiError } from './errors.js';
import {
  csrfProtection,
  csrfToken,
  endSession,
  sessionCookieName,
  sessionMiddleware,
  sessionUserId,
  startSignedInSession,
  startTwoFactorStep,
  type SessionLifetimes,
  type SignInCsrf,
} from './session.js';
import { activeUser } from '../domain/users.js';

/**
 * A 302 with only its Location, as the document describes redirects: Express's res.redirect would add a small
 * text or HTML body ("Found. Redirecting to ...") that the document does not have.
 */
function redirect(res: Response, location: string): void {
  res.status(302).location(location).end();
}

type Schemas = components['schemas'];

export interface PagesOptions {
  store: Store;
  now: () => number;
  codeTtl: number;
  secureCookies: boolean;
  throttle: LoginThrottle;
  sessionLifetimes: SessionLifetimes;
  /** The sign-in form's stateless CSRF protection (session.ts). */
  signInCsrf: SignInCsrf;
}

/** The paths that belong to a browser session; the API and the JSON OAuth endpoints never see a cookie. */
export const sessionPaths = ['/users/sign_in', '/users/sign_out', '/oauth/authorize', '/profile'];
/** Every path that answers HTML pages (or their stylesheet). */
export const pagePaths = [...sessionPaths, '/assets'];

const signInPath = '/users/sign_in';
const home = '/profile/applications';

const baseDirectives = {
  defaultSrc: ["'self'"],
  baseUri: ["'none'"],
  // No page needs JavaScript, so none may run, inline or not.
  scriptSrc: ["'none'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'"],
  objectSrc: ["'none'"],
  formAction: ["'self'"],
  // Nobody may frame a page: a framed consent page could be clickjacked into "Authorize".
  frameAncestors: ["'none'"],
};

/**
 * Security headers and no caching for every page, errors included (mounted before the body parsers so even a
 * 413 page carries them). Referrer-Policy no-referrer: the consent page's URL holds state and PKCE challenge, and
 * nothing a page links to should learn it.
 */
export function pageHeaders(secureCookies: boolean): RequestHandler[] {
  return [
    helmet({
      contentSecurityPolicy: { useDefaults: false, directives: baseDirectives },
      frameguard: { action: 'deny' },
      referrerPolicy: { policy: 'no-referrer' },
      // HSTS means something only over https; over plain http it would just be noise.
      strictTransportSecurity: secureCookies,
    }),
    (req, res, next) => {
      // Mounted on several paths, so req.path is relative to the mount point; baseUrl names it.
      if (req.baseUrl !== '/assets') res.set('Cache-Control', 'no-store');
      next();
    },
  ];
}

/**
 * The consent page's policy. CSP `form-action` governs not only where a form posts but, in Chromium, every
 * redirect that follows the submission: the consent form posts to 'self', which answers 302 to the client's
 * redirect URI, and with `form-action 'self'` alone Chromium blocks that navigation. So this one page also allows
 * the origin of the (already verified, exactly registered) redirect URI of the request it shows, and nothing else.
 */
const consentPolicy = helmet.contentSecurityPolicy({
  useDefaults: false,
  directives: { ...baseDirectives, formAction: ["'self'", (_req, res) => (res as Response).locals.redirectSource as string] },
});

/** The CSP source for a redirect URI: its origin, or for private-use schemes (RFC 8252) the scheme. */
export function formActionSource(redirectUri: string): string {
  const url = new URL(redirectUri);
  // Hosts may contain characters (";", ",") that would end a CSP directive; such an origin falls back to its scheme.
  if ((url.protocol === 'http:' || url.protocol === 'https:') && /^https?:\/\/[A-Za-z0-9.\-[\]:]+$/.test(url.origin)) return url.origin;
  return url.protocol;
}

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
const queryString = (params: Record<string, string>) =>
  Object.entries(params)
    .map(([k, v]) => `${k}=${encodeURIComponent(v).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`)
    .join('&');

const signInLocation = (returnTo: string | undefined) => (returnTo ? `${signInPath}?${queryString({ return_to: returnTo })}` : signInPath);

function currentUser(store: Store, req: Request): UserRecord | undefined {
  const id = sessionUserId(req);
  return id === undefined ? undefined : activeUser(store, id);
}

const authorizationParamNames = ['client_id', 'redirect_uri', 'response_type', 'state', 'scope', 'code_challenge', 'code_challenge_method'] as const;

/** The authorization request's parameters from the query or the consent form (strings only; the validator ran). */
function authorizationParams(source: Record<string, unknown>): AuthorizationRequest {
  const params: Record<string, string> = {};
  for (const name of authorizationParamNames) {
    const value = source[name];
    if (typeof value === 'string') params[name] = value;
  }
  return { client_id: '', redirect_uri: '', response_type: '', ...params };
}

/** Where to resume after signing in when a form was posted without a session: the page the form came from. */
function resumePathForPost(req: Request): string {
  if (req.path === '/oauth/authorize') {
    const params = authorizationParams((req.body ?? {}) as Record<string, unknown>);
    const sent = Object.entries(params).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1] !== '');
    return `/oauth/authorize?${queryString(Object.fromEntries(sent))}`;
  }
  return req.path.startsWith('/profile/personal_access_tokens') ? '/profile/personal_access_tokens' : home;
}

/**
 * Runs before the validator: the session, then (for forms that act for a user) a redirect to sign in when there
 * is no user, then the CSRF check. A forged or stale form is refused with 403 before anything else reads it.
 */
export function pageSessions({ store, secureCookies, now, sessionLifetimes, signInCsrf }: PagesOptions): Router {
  const router = Router();
  router.use(sessionPaths, sessionMiddleware(store, secureCookies, now, sessionLifetimes));
  router.post(['/oauth/authorize', '/profile/*rest'], (req, res, next) => {
    if (currentUser(store, req)) return next();
    redirect(res, signInLocation(resumePathForPost(req)));
  });
  // The sign-in form is posted by visitors who have no session yet (and must not get one for asking).
  router.use(signInPath, signInCsrf.protection);
  router.use(
    sessionPaths.filter((path) => path !== signInPath),
    csrfProtection,
  );
  return router;
}

/** The stylesheet, outside the document's operations, so mounted before the validator. */
export function pageAssets(): Router {
  const router = Router();
  router.get(stylesheetPath, serveStylesheet);
  return router;
}

const html = (res: Response, status: number, page: string) => res.status(status).type('html').send(page);
const asList = (value: unknown): string[] | undefined =>
  value === undefined ? undefined : (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');

const fieldLabels: Record<string, string> = {
  name: 'Name',
  redirect_uris: 'Redirect URIs',
  scopes: 'Scopes',
  expires_at: 'Expires at',
};
const describeFieldError = (error: InputError) => `${fieldLabels[error.field] ?? error.field} ${error.message}.`;

export function pagesRouter({ store, now, codeTtl, throttle, signInCsrf }: PagesOptions): Router {
  const router = Router();

  /** The signed-in user, or a redirect to sign in and back here (GET pages). */
  const signedIn = (req: Request, res: Response): UserRecord | undefined => {
    const user = currentUser(store, req);
    if (!user) redirect(res, signInLocation(localPath(req.originalUrl)));
    return user;
  };
  /** For the form routes, which pageSessions has already sent to sign-in without a user. */
  const userOf = (req: Request): UserRecord => {
    const user = currentUser(store, req);
    if (!user) throw new ApiError(403, 'Your session has ended. Sign in again.');
    return user;
  };

  router.get(signInPath, (req, res) => {
    html(res, 200, signInPage({ csrf: signInCsrf.token(req, res), returnTo: localPath(req.query.return_to) }));
  });

  /** The second step of a two-factor sign-in: the code, in the session whose password step succeeded. */
  const codeStep = async (req: Request, res: Response, code: string, returnTo: string | undefined) => {
    const pending = req.session.twoFactor;
    if (!pending || pending.until <= now()) {
      delete req.session.twoFactor;
      const error = 'The sign-in was not started or took too long. Enter your login and password again.';
      html(res, 401, signInPage({ csrf: signInCsrf.token(req, res), returnTo, error }));
      return;
    }
    if (!(await throttle.verifyCode(store, pending.userId, code.trim(), now(), req.ip ?? ''))) {
      html(res, 401, twoFactorPage({ csrf: signInCsrf.token(req, res), returnTo, error: 'Invalid code.' }));
      return;
    }
    await startSignedInSession(req, pending.userId, now());
    redirect(res, returnTo ?? home);
  };

  router.post(signInPath, async (req, res) => {
    const body = req.body as Schemas['SignInForm'];
    const returnTo = localPath(body.return_to);
    if ('otp_attempt' in body) return codeStep(req, res, body.otp_attempt, returnTo);
    const user = await throttle.authenticate(store, body.login, body.password, req.ip ?? '', { secondFactorCanFollow: true });
    if (!user) {
      // One message whatever was wrong, so the page does not tell which logins exist.
      html(res, 401, signInPage({ csrf: signInCsrf.token(req, res), returnTo, login: body.login, error: 'Invalid login or password.' }));
      return;
    }
    if (user.two_factor_enabled) {
      if (!user.otpSecret) {
        const error = 'This account has two-factor authentication, but no authenticator is registered for it on this server, so it cannot sign in here. Its seed entry needs an otp_secret.';
        html(res, 401, signInPage({ csrf: signInCsrf.token(req, res), returnTo, login: body.login, error }));
        return;
      }
      startTwoFactorStep(req, user.id, now(), limits.twoFactorStepSeconds);
      html(res, 200, twoFactorPage({ csrf: signInCsrf.token(req, res), returnTo }));
      return;
    }
    await startSignedInSession(req, user.id, now());
    redirect(res, returnTo ?? home);
  });

  router.post('/users/sign_out', async (req, res) => {
    await endSession(req);
    res.clearCookie(sessionCookieName, { path: '/', httpOnly: true, sameSite: 'lax' });
    redirect(res, signInPath);
  });

  router.get('/oauth/authorize', (req, res) => {
    const checked = checkAuthorizationRequest(store, authorizationParams(req.query));
    if (checked.outcome === 'show-error') throw new ApiError(400, checked.message);
    // Anyone can register an application with any redirect URI, so an error redirect for an anonymous visitor
    // would make this endpoint an open redirector (RFC 9700 section 4.11.2): sign in first, on this origin.
    const user = signedIn(req, res);
    if (!user) return;
    if (checked.outcome === 'redirect-error') return redirect(res, checked.location);
    res.locals.redirectSource = formActionSource(checked.request.redirect_uri);
    consentPolicy(req, res, (err?: unknown) => {
      if (err) throw err;
    });
    html(res, 200, consentPage(user, csrfToken(req), checked.request));
  });

  router.post('/oauth/authorize', async (req, res) => {
    const user = userOf(req);
    const body = req.body as Schemas['ConsentDecision'];
    // The hidden fields are checked exactly as the query was: they are only as trustworthy as any other input.
    const checked = checkAuthorizationRequest(store, authorizationParams(body));
    if (checked.outcome === 'show-error') throw new ApiError(400, checked.message);
    if (checked.outcome === 'redirect-error') return redirect(res, checked.location);
    const location =
      body.decision === 'approve'
        ? await approveAuthorization(store, user.id, checked.request, { now: now(), codeTtl })
        : denyAuthorization(checked.request);
    redirect(res, location);
  });

  const applicationsView = (req: Request, user: UserRecord, status: number, res: Response, form?: ApplicationFormState) =>
    html(
      res,
      status,
      applicationsPage({
        user,
        csrf: csrfToken(req),
        applications: listApplications(store, user.id),
        authorized: authorizedApplications(store, user.id, now()),
        ...(form ? { form } : {}),
      }),
    );

  router.get('/profile/applications', (req, res) => {
    const user = signedIn(req, res);
    if (user) applicationsView(req, user, 200, res);
  });

  router.post('/profile/applications', async (req, res) => {
    const user = userOf(req);
    const body = req.body as Schemas['ApplicationForm'];
    const scopes = asList(body.scopes);
    const redirectUris = body.redirect_uri
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line !== '');
    try {
      const { record, secret } = await registerApplication(store, user.id, {
        name: body.name,
        redirect_uris: redirectUris,
        ...(scopes ? { scopes: scopes as Scope[] } : {}),
      });
      html(res, 201, applicationCreatedPage(user, csrfToken(req), record, secret, redirectUriWarnings(record.redirect_uris)));
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      applicationsView(req, user, 400, res, { name: body.name, redirect_uri: body.redirect_uri, scopes, error: describeFieldError(error) });
    }
  });

  router.post('/profile/applications/:application_id/delete', async (req, res) => {
    const user = userOf(req);
    if (!(await deleteApplication(store, user.id, Number(req.params.application_id)))) {
      throw new ApiError(404, 'You have no such application.');
    }
    redirect(res, home);
  });

  // Before the route with the parameter, as the document's static path comes before its templated one.
  router.post('/profile/authorized_applications/password_grant/revoke', async (req, res) => {
    const user = userOf(req);
    if (!(await revokeApplicationAuthorization(store, user.id, null, now()))) {
      throw new ApiError(404, 'No password grant tokens have access to your account.');
    }
    redirect(res, home);
  });

  router.post('/profile/authorized_applications/:application_id/revoke', async (req, res) => {
    const user = userOf(req);
    if (!(await revokeApplicationAuthorization(store, user.id, Number(req.params.application_id), now()))) {
      throw new ApiError(404, 'No such application has access to your account.');
    }
    redirect(res, home);
  });

  const tokensPath = '/profile/personal_access_tokens';
  const today = () => new Date(now() * 1000).toISOString().slice(0, 10);
  const tokensView = (req: Request, user: UserRecord, status: number, res: Response, form?: TokenFormState) =>
    html(
      res,
      status,
      personalAccessTokensPage({
        user,
        csrf: csrfToken(req),
        tokens: listPersonalAccessTokens(store, user.id),
        today: today(),
        ...(form ? { form } : {}),
      }),
    );

  router.get(tokensPath, (req, res) => {
    const user = signedIn(req, res);
    if (user) tokensView(req, user, 200, res);
  });

  router.post(tokensPath, async (req, res) => {
    const user = userOf(req);
    const body = req.body as Schemas['PersonalAccessTokenForm'];
    const scopes = asList(body.scopes);
    try {
      const { record, token } = await createPersonalAccessToken(store, user.id, {
        name: body.name,
        expires_at: body.expires_at ? body.expires_at : null,
        ...(scopes ? { scopes: scopes as Scope[] } : {}),
      });
      html(res, 201, tokenCreatedPage(user, csrfToken(req), record, token));
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      tokensView(req, user, 400, res, { name: body.name, expires_at: body.expires_at, scopes, error: describeFieldError(error) });
    }
  });

  router.post(`${tokensPath}/:token_id/revoke`, async (req, res) => {
    const user = userOf(req);
    if (!(await revokePersonalAccessToken(store, user.id, Number(req.params.token_id)))) {
      throw new ApiError(404, 'You have no such personal access token.');
    }
    redirect(res, tokensPath);
  });

  return router;
}
