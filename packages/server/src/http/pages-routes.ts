// The browser-facing area: its headers, sessions and CSRF checks, the stylesheet, and one small router per page
// (http/pages/): sign-in, the authorization endpoint's consent, the device verification pages, applications, personal
// access tokens. The rules live in the domain, the markup in src/pages; the routers and the markup are imported at the
// first page request, so a server that only answers the API never loads them.
import { Router, type Request, type RequestHandler } from 'express';
import helmet from 'helmet';
import { faviconPath, serveFavicon, serveStylesheet, stylesheetPath } from '../pages/assets.js';
import { demoCallbackPath } from '../domain/seed/demo.js';
import { lazyRouter } from './lazy-router.js';
import { authorizationResumePath, devicePath, deviceResumePath } from './pages/resume-paths.js';
import { baseDirectives, currentUser, home, type PagesOptions, redirect, signInLocation, signInPath } from './pages/shared.js';
import { csrfProtection, sessionMiddleware } from './session.js';

export { localPath, type PagesOptions } from './pages/shared.js';

/** The paths that belong to a browser session; the API and the JSON OAuth endpoints never see a cookie. */
export const sessionPaths = ['/users/sign_in', '/users/sign_out', '/oauth/authorize', devicePath, '/profile', '/admin'];
/** Every path that answers HTML pages (or their stylesheet). */
export const pagePaths = [...sessionPaths, '/assets', '/demo', '/help'];

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

/** Where to resume after signing in when a form was posted without a session: the page the form came from. */
function resumePathForPost(req: Request): string {
  if (req.path === '/oauth/authorize') return authorizationResumePath((req.body ?? {}) as Record<string, unknown>);
  if (req.path.startsWith(devicePath)) return deviceResumePath((req.body ?? {}) as Record<string, unknown>);
  return req.path.startsWith('/profile/personal_access_tokens') ? '/profile/personal_access_tokens' : home;
}

/**
 * Runs before the validator: the session, then (for forms that act for a user) a redirect to sign in when there
 * is no user, then the CSRF check. A forged or stale form is refused with 403 before anything else reads it.
 */
export function pageSessions({ storage, secureCookies, now, sessionLifetimes, signInCsrf, sessions: backing }: PagesOptions): Router {
  const router = Router();
  const sessions = sessionMiddleware(backing, secureCookies, now, sessionLifetimes);
  router.use(sessionPaths, sessions);
  // The landing page and the demo's callback read the session (to greet a signed-in user, and name them in the
  // header) but post nothing.
  // One route each: a route's path names it in the logs and metrics, and an array would name both.
  router.get('/', sessions);
  router.get(demoCallbackPath, sessions);
  router.post(['/oauth/authorize', devicePath, `${devicePath}/confirm`, '/profile/*rest'], async (req, res, next) => {
    if (await currentUser(storage, req)) return next();
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
  router.get(faviconPath, serveFavicon);
  return router;
}

/** The pages themselves, loaded at the first request that gets this far (lazy-router.ts). */
export function pagesRouter(options: PagesOptions & { baseUrl: string }): RequestHandler {
  return lazyRouter(async () => (await import('./pages/routers.js')).pageRouters(options));
}
