// The headers every page answers with: a strict Content-Security-Policy and the rest of helmet's, and no caching.
// Apart from the routers, which load at the first page request (pages-routes.ts), because they are set from the start.
import type { RequestHandler } from 'express';
import helmet from 'helmet';

/** The pages' Content-Security-Policy (helmet directives); the consent page widens form-action only. */
export const baseDirectives = {
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
