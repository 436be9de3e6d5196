// Cross-origin requests, as the service answers them (its config/initializers/cors.rb): the API and the OAuth
// endpoints a browser app calls (token, revocation, token info, metadata) answer any origin, without credentials,
// so a single-page app can use tokenbell directly with a bearer token. Nothing else does: the pages, their
// cookie-authenticated forms, introspection (for resource servers, not browsers) and the operations endpoints send
// no CORS headers, so a page elsewhere cannot read them.
import cors from 'cors';
import type { RequestHandler } from 'express';
import { areaOf, oauthEndpointOf } from './areas.js';

const browserOAuthEndpoints = new Set(['token', 'revoke', 'token_info', 'metadata']);

const forAnyOrigin = cors({
  origin: '*',
  credentials: false,
  methods: ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH'],
  // Allowed request headers default to those the preflight asks for (the service allows any).
  exposedHeaders: ['WWW-Authenticate', 'X-Request-Id', 'Retry-After'],
  maxAge: 7200,
});

export const crossOrigin: RequestHandler = (req, res, next) => {
  const area = areaOf(req.path);
  const endpoint = area === 'oauth' ? oauthEndpointOf(req.path) : undefined;
  if (area === 'api' || (endpoint !== undefined && browserOAuthEndpoints.has(endpoint))) return forAnyOrigin(req, res, next);
  next();
};
