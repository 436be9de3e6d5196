// A router whose modules are imported at its first request rather than at start: the pages and the API reference
// pull in their markup, sessions, Swagger UI's routes and helmet's policies, none of which a server answering only the
// API (a test double, most often) ever needs, so the process listens without them.
import type { RequestHandler } from 'express';

export function lazyRouter(load: () => Promise<RequestHandler>): RequestHandler {
  let loading: Promise<RequestHandler> | undefined;
  let router: RequestHandler | undefined;
  return (req, res, next) => {
    // Once loaded, called as if it had been there from the start: no promise between the request and the router.
    if (router) return router(req, res, next);
    loading ??= load().then((handler) => (router = handler));
    // A failed import is the request's error (and every later one's): a broken build should not pass as 404s.
    loading.then((handler) => handler(req, res, next), next);
  };
}
