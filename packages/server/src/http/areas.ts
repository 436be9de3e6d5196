// Which area a request belongs to decides the format of every answer, errors included: the API answers JSON with a
// `message` (so do the operations endpoints under /-/), the OAuth endpoints RFC 6749 JSON, everything else HTML pages. Express matches routes whatever the
// case of the path (and so does the validator), so this decision ignores case too: `/API/V3/user` is the API and
// `/OAUTH/TOKEN` the token endpoint, answered in their formats. Routing, the error handler and the tests use this.

export type Area = 'api' | 'oauth' | 'operations' | 'pages';

/** The JSON endpoints of the OAuth area, by the path that names them. */
export type OAuthEndpoint = 'token' | 'revoke' | 'introspect' | 'token_info' | 'userinfo' | 'metadata' | 'keys' | 'device_authorization';

/** Everything under /api answers in the API's format; of it, /api/v3 is served (after the v4 alias). */
const apiPath = /^\/api(?:\/|$)/i;
/** Health, readiness and metrics, under /-/ as the service has them. */
const operationsPath = /^\/-(?:\/|$)/;
const servedApiPath = /^\/api\/v3(?:\/|$)/i;
/** The test-helper area, in any case, as Express routes (isServedApiPath's rule). */
export const testHelpersPath = /^\/api\/v3\/test_helpers(?:\/|$)/i;

// As Express matches them (non-strict routing): a trailing slash names the same route.
const oauthEndpoints: Array<[RegExp, OAuthEndpoint]> = [
  [/^\/oauth\/token\/?$/i, 'token'],
  [/^\/oauth\/revoke\/?$/i, 'revoke'],
  [/^\/oauth\/introspect\/?$/i, 'introspect'],
  [/^\/oauth\/token\/info\/?$/i, 'token_info'],
  [/^\/oauth\/userinfo\/?$/i, 'userinfo'],
  [/^\/oauth\/discovery\/keys\/?$/i, 'keys'],
  [/^\/oauth\/authorize_device\/?$/i, 'device_authorization'],
  [/^\/\.well-known\//i, 'metadata'],
];

export function oauthEndpointOf(path: string): OAuthEndpoint | undefined {
  return oauthEndpoints.find(([pattern]) => pattern.test(path))?.[1];
}

/**
 * The OAuth area's public documents, the server metadata and the JWK set: no token passes through them, so caches may
 * keep them, and no RFC 6749 error is theirs to answer.
 */
export const isPublicDocument = (endpoint: OAuthEndpoint | undefined): boolean => endpoint === 'metadata' || endpoint === 'keys';

export function areaOf(path: string): Area {
  if (apiPath.test(path)) return 'api';
  if (operationsPath.test(path)) return 'operations';
  return oauthEndpointOf(path) === undefined ? 'pages' : 'oauth';
}

/**
 * The format an error at the path is answered in: RFC 6749 JSON at the OAuth endpoints; the API's `{"message"}` JSON
 * in the API, the operations endpoints, under /.well-known (only the metadata document there is OAuth's) and at the
 * JWK set (public documents, whose errors are plain); an HTML page everywhere else.
 */
export type ErrorFormat = 'oauth' | 'message' | 'page';

export function errorFormatOf(path: string): ErrorFormat {
  const area = areaOf(path);
  if (area === 'pages') return 'page';
  return area === 'oauth' && !isPublicDocument(oauthEndpointOf(path)) ? 'oauth' : 'message';
}

/** Whether the API branch serves the path (authentication, validation, routes); other API paths are only 404s. */
export function isServedApiPath(path: string): boolean {
  return servedApiPath.test(path);
}
