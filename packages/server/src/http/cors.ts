// Cross-origin requests, as the service answers them (its config/initializers/cors.rb): the API and the OAuth
// endpoints a browser app calls (token, device authorization, revocation, token info, userinfo, metadata, the JWK set) answer any origin,
// without credentials, so a single-page app can use tokenbell directly with a bearer token. Nothing else does: the pages, their
// cookie-authenticated forms, introspection (for resource servers, not browsers) and the operations endpoints send
// no CORS headers, so a page elsewhere cannot read them.
import cors from 'cors';
import type { RequestHandler } from 'express';
import { type Area, oauthEndpointOf } from './areas.js';

const browserOAuthEndpoints = new Set(['token', 'revoke', 'token_info', 'userinfo', 'metadata', 'keys', 'device_authorization']);

/**
 * What the answers to any origin say, in one place: the server's middleware and the mock's document
 * (scripts/lib/mock-document.ts) are both made from it, so a UI built on the mock meets the server's CORS answers.
 */
export const corsPolicy = {
  methods: ['GET', 'HEAD', 'PUT', 'POST', 'DELETE', 'PATCH'],
  // What a script may read of an answer besides the safelisted headers: the request id a bug report quotes, the
  // bearer challenge and the wait after a 429 or 503.
  exposedHeaders: ['WWW-Authenticate', 'X-Request-Id', 'Retry-After', 'X-Total', 'X-Total-Pages', 'X-Page', 'X-Per-Page', 'X-Next-Page', 'X-Prev-Page', 'Link'],
  maxAge: 7200,
} as const;

const forAnyOrigin = cors({
  origin: '*',
  credentials: false,
  methods: [...corsPolicy.methods],
  // Allowed request headers default to those the preflight asks for (the service allows any).
  exposedHeaders: [...corsPolicy.exposedHeaders],
  maxAge: corsPolicy.maxAge,
});

/** Whether a request of this area and path answers any origin (the caller has the area already). */
export function answersAnyOrigin(area: Area, path: string): boolean {
  if (area === 'api') return true;
  const endpoint = area === 'oauth' ? oauthEndpointOf(path) : undefined;
  return endpoint !== undefined && browserOAuthEndpoints.has(endpoint);
}

const exposed = corsPolicy.exposedHeaders.join(',');

/**
 * Sets the CORS headers, or answers a preflight itself. An actual request gets the two headers the cors package sets
 * for it with this policy (any origin, so no Vary; no credentials), set here directly: the package would make its
 * option callbacks and header list again for every API request. Preflights stay the package's.
 */
export const crossOrigin: RequestHandler = (req, res, next) => {
  if (req.method === 'OPTIONS') return forAnyOrigin(req, res, next);
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', exposed);
  next();
};
