// The pages' session layer and their routers, loaded together at the first request that reaches them
// (pages-routes.ts): express-session, the two CSRF libraries and the markup, none of which a server answering only
// the API and the OAuth endpoints (a test double, most often) ever needs.
import { Router, type Request } from 'express';
import { demoCallbackPath } from '../../domain/seed/demo.js';
import type { Viewer } from '../../pages/html.js';
import { sessionPaths } from '../pages-routes.js';
import { csrfProtection, sessionMiddleware, signInCsrf } from '../session.js';
import { devicePath, home, signInPath } from './paths.js';
import { authorizationResumePath, deviceResumePath } from './resume-paths.js';
import { pageRouters } from './routers.js';
import { currentUser, type PagesOptions, redirect, signInLocation, viewerOf } from './shared.js';

export interface PageStack {
  /** Before the validator: sessions and the CSRF checks. */
  sessions: Router;
  /** After it: the pages. */
  pages: Router;
  /** The signed-in user for an error page's header. */
  viewer(req: Request): Promise<Viewer>;
}

export function pageStack(options: Omit<PagesOptions, 'signInCsrf'> & { baseUrl: string }): PageStack {
  const pages = { ...options, signInCsrf: signInCsrf(options.sessions.secret, options.secureCookies) };
  return { sessions: pageSessions(pages), pages: pageRouters(pages), viewer: (req) => viewerOf(options.storage, req) };
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
function pageSessions({ storage, secureCookies, now, sessionLifetimes, signInCsrf, sessions: backing }: PagesOptions): Router {
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
