// Every documented operation, asked for with its path in other cases, is answered exactly as with the path as
// written: Express and the validator match paths whatever their case, so the format of the answer (API JSON,
// RFC 6749 JSON, HTML pages) and its headers must not depend on it either.
import { keySetLifetime } from '../../src/domain/oidc/signing-keys.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { areaOf, errorFormatOf, isPublicDocument, isServedApiPath, oauthEndpointOf } from '../../src/http/areas.js';
import { document } from '../../src/openapi/document.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe('areaOf', () => {
  it.each([
    ['/api/v3/user', 'api', 'message'],
    ['/API/V3/user', 'api', 'message'],
    ['/Api/V4/notification_settings', 'api', 'message'],
    ['/api/v3', 'api', 'message'],
    ['/api/v35/user', 'api', 'message'],
    ['/apiv3/user', 'pages', 'page'],
    ['/oauth/token', 'oauth', 'oauth'],
    ['/OAUTH/TOKEN/', 'oauth', 'oauth'],
    ['/OAuth/Token/Info', 'oauth', 'oauth'],
    ['/oauth/Revoke', 'oauth', 'oauth'],
    ['/oauth/introspect', 'oauth', 'oauth'],
    ['/oauth/discovery/keys', 'oauth', 'message'],
    ['/OAuth/Discovery/Keys/', 'oauth', 'message'],
    ['/oauth/discovery', 'pages', 'page'],
    ['/.Well-Known/oauth-authorization-server', 'oauth', 'message'],
    ['/.well-known/no-such-document', 'oauth', 'message'],
    ['/oauth/authorize', 'pages', 'page'],
    ['/oauth/tokens', 'pages', 'page'],
    ['/users/sign_in', 'pages', 'page'],
    ['/-/health', 'operations', 'message'],
    ['/-/metrics', 'operations', 'message'],
    ['/-', 'operations', 'message'],
    ['/-x/health', 'pages', 'page'],
  ])('%s belongs to %s, its errors answered as %s', (path, area, format) => {
    expect(areaOf(path)).toBe(area);
    expect(errorFormatOf(path)).toBe(format);
  });

  it('serves /api/v3 only (v4 arrives rewritten); other API paths are answered 404 in the API format', () => {
    expect(isServedApiPath('/API/V3/user')).toBe(true);
    expect(isServedApiPath('/api/v3')).toBe(true);
    expect(isServedApiPath('/api/v3x/user')).toBe(false);
    expect(isServedApiPath('/api/v4/user')).toBe(false);
  });

  it('tells the metadata and the JWK set apart from the endpoints that answer RFC 6749 errors', () => {
    expect(oauthEndpointOf('/.well-known/oauth-authorization-server')).toBe('metadata');
    expect(oauthEndpointOf('/oauth/discovery/keys')).toBe('keys');
    expect(oauthEndpointOf('/OAUTH/TOKEN/INFO')).toBe('token_info');
  });
});

const sampleParams: Record<string, string> = { id: 'acme', application_id: '1', token_id: '1' };
const operations = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
  Object.keys(item)
    .filter((method) => ['get', 'post', 'put', 'delete'].includes(method))
    .map((method) => ({ method: method.toUpperCase(), path: path.replace(/\{(\w+)\}/g, (_, name: string) => sampleParams[name]!) })),
);

/** The path with every letter outside parameter values upper-cased, or alternating case. */
const variants = (path: string) => [
  path.replace(/[a-z_]+/g, (word) => (Object.values(sampleParams).includes(word) ? word : word.toUpperCase())),
  path.replace(/[a-z]/g, (c, i: number) => (i % 2 ? c.toUpperCase() : c)),
];

/** What a client can tell about an answer's format. */
async function shape(method: string, path: string) {
  const response = await fetch(server.baseUrl + path, {
    method,
    redirect: 'manual',
    ...(method === 'GET' ? {} : { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' }),
  });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  return {
    status: response.status,
    type: type.split(';')[0],
    cacheControl: response.headers.get('cache-control'),
    nosniff: response.headers.get('x-content-type-options'),
    challenge: response.headers.get('www-authenticate'),
    location: response.headers.get('location') ? new URL(response.headers.get('location')!, server.baseUrl).pathname : null,
    body: type.startsWith('application/json') ? JSON.parse(text) : text.length > 0,
  };
}

/** The media types the document declares for an operation's answer with this status. */
const declaredTypes = (method: string, path: string, status: number): string[] => {
  const template = Object.keys(document.paths).find((p) => p.replace(/\{(\w+)\}/g, (_: string, name: string) => sampleParams[name]!) === path)!;
  const response = document.paths[template][method.toLowerCase()].responses[String(status)];
  return Object.keys(response?.content ?? {});
};

// A path without letters (the landing page, /) has no other case to ask for.
describe.each(operations.filter(({ path }) => /[a-z]/.test(path)))('$method $path in other cases', ({ method, path }) => {
  it('gets the same answer, in its area’s format', async () => {
    const canonical = await shape(method, path);
    for (const variant of variants(path)) {
      expect(variant).not.toBe(path);
      expect({ variant, ...(await shape(method, variant)) }).toEqual({ variant, ...canonical });
    }
    const area = areaOf(path);
    if (area === 'pages') {
      expect(canonical.status === 302 ? canonical.location : canonical.type).toBeTruthy();
      // HTML pages, and the document itself where the document says so.
      if (canonical.status !== 302) expect(declaredTypes(method, path, canonical.status).length ? declaredTypes(method, path, canonical.status) : ['text/html']).toContain(canonical.type);
    } else if (area === 'operations') {
      // Health and metrics are text by nature (the document says which); neither is cached nor sniffed.
      expect(canonical.nosniff).toBe('nosniff');
      expect(canonical.cacheControl).toBe('no-store');
    } else {
      expect(canonical.type).toBe('application/json');
      expect(canonical.nosniff).toBe('nosniff');
      // The public documents may be cached: the metadata for as long as a client likes, the JWK set for ten minutes
      // (a new key is published that long before it signs, domain/oidc/signing-keys.ts).
      if (oauthEndpointOf(path) === 'keys') expect(canonical.cacheControl).toBe(`public, max-age=${keySetLifetime}`);
      else if (oauthEndpointOf(path) !== 'metadata') expect(canonical.cacheControl).toBe('no-store');
    }
    if (area === 'api') {
      expect(canonical.status).toBe(401);
      expect(canonical.challenge).toMatch(/^Bearer /);
      expect(canonical.body).toEqual({ message: '401 Unauthorized' });
    }
    if (area === 'oauth' && !isPublicDocument(oauthEndpointOf(path))) expect(canonical.body).toHaveProperty('error');
  });
});

describe('JSON answers are neither cached nor sniffed', () => {
  it('holds for API successes and errors, the v4 alias and the OAuth endpoints', async () => {
    const token = (await (
      await fetch(`${server.baseUrl}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=password&username=jsmith&password=correct-horse-battery',
      })
    ).json()) as { access_token: string };
    const answers = await Promise.all([
      fetch(`${server.baseUrl}/api/v3/user?access_token=${token.access_token}`),
      fetch(`${server.baseUrl}/api/v4/notification_settings`, { headers: { authorization: `Bearer ${token.access_token}` } }),
      fetch(`${server.baseUrl}/api/v3/groups/no-such-group/notification_settings`, { headers: { authorization: `Bearer ${token.access_token}` } }),
      fetch(`${server.baseUrl}/api/v3/nothing-here`, { headers: { authorization: `Bearer ${token.access_token}` } }),
      fetch(`${server.baseUrl}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"token":"unknown"}' }),
    ]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 404, 404, expect.any(Number)]);
    for (const response of answers) {
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });
});
