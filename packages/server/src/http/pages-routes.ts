// The browser-facing area: its headers, sessions and CSRF checks, the stylesheet, and one small router per page
// (http/pages/): sign-in, the authorization endpoint's consent, the device verification pages, applications, personal
// access tokens. The rules live in the domain, the markup in src/pages; the session layer, the routers and the markup
// are imported at the first request that reaches them (pages/stack.ts), so a server that only answers the API and
// the OAuth endpoints never loads them.
import { Router, type Request, type RequestHandler } from 'express';
import type { Viewer } from '../pages/html.js';
import { faviconPath, serveFavicon, serveStylesheet, stylesheetPath } from '../pages/assets.js';
import { lazyRouter } from './lazy-router.js';
import { devicePath, signInPath } from './pages/paths.js';
import type { PagesOptions } from './pages/shared.js';
import type { PageStack } from './pages/stack.js';

export { pageHeaders } from './pages/headers.js';

/** The paths that belong to a browser session; the API and the JSON OAuth endpoints never see a cookie. */
export const sessionPaths = [signInPath, '/users/sign_out', '/oauth/authorize', devicePath, '/profile', '/admin'];
/** Every path that answers HTML pages (or their stylesheet). */
export const pagePaths = [...sessionPaths, '/assets', '/demo', '/help'];

/** The stylesheet, outside the document's operations, so mounted before the validator. */
export function pageAssets(): Router {
  const router = Router();
  router.get(stylesheetPath, serveStylesheet);
  router.get(faviconPath, serveFavicon);
  return router;
}

/**
 * The session layer (before the validator), the pages (after it), and the signed-in user for the error pages, from
 * one module loaded at the first request that needs any of them.
 */
export function pagesArea(options: Omit<PagesOptions, 'signInCsrf'> & { baseUrl: string }): {
  sessions: RequestHandler;
  pages: RequestHandler;
  viewer: (req: Request) => Promise<Viewer>;
} {
  let stack: Promise<PageStack> | undefined;
  const load = () => (stack ??= import('./pages/stack.js').then(({ pageStack }) => pageStack(options)));
  return {
    sessions: lazyRouter(async () => (await load()).sessions),
    pages: lazyRouter(async () => (await load()).pages),
    // A request without a session read none (its path has no session layer), so it names nobody, loaded or not.
    viewer: async (req) => (req.session === undefined ? undefined : (await load()).viewer(req)),
  };
}
