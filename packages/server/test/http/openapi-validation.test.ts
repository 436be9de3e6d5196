// The validator with its route lookup cached must answer every request exactly as express-openapi-validator's own
// chain does: same operation, same path parameters, same errors, on the first request to a route and on the ones
// that find it remembered.
import express, { type ErrorRequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { OpenApiSpecLoader } from 'express-openapi-validator/dist/framework/openapi.spec.loader.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiValidation, validationDocument, validatorOptions, warmUpRequests, warmUpValidation } from '../../src/http/openapi-validation.js';
import { compileDocumentCheckOnUse, documentRoutes } from '../../src/http/validator-route-cache.js';
import { document, documentPath } from '../../src/openapi/document.js';
import { rawRequest } from '../hardening/support.js';
import { listen, probe, requestPath, type Listening } from '../support/validator-probe.js';

describe('the route table', () => {
  it('lists the routes in the order and syntax of the validator (its first match wins)', async () => {
    const { routes } = await new OpenApiSpecLoader({ apiDoc: documentPath, validateApiSpec: false, $refParser: { mode: 'bundle' } }).load();
    expect(documentRoutes(document)).toEqual([...new Set(routes.map((r) => r.expressRoute))]);
  });

  it('replaces the lookup step and drops only the steps that do nothing here', () => {
    // A validator upgrade that renames its steps fails here rather than silently losing the cache.
    expect(openApiValidation({ validateResponses: false }).map((h) => h.name)).toEqual(['cachedMetadataMiddleware', 'requestMiddleware']);
    expect(openApiValidation({ validateResponses: true }).map((h) => h.name)).toEqual([
      'cachedMetadataMiddleware',
      'requestMiddleware',
      'responseMiddleware',
    ]);
  });
});

describe('what the validator is given', () => {
  const count = (value: unknown): number => (value !== null && typeof value === 'object' ? 1 + Object.values(value).reduce((n: number, v) => n + count(v), 0) : 0);

  it('leaves out examples everywhere, tags, and unless they are validated the answers and the schemas only they use', () => {
    const named = { type: 'object', properties: { example: { type: 'string', example: 'x' }, examples: { type: 'integer' } }, examples: [{ example: 'y' }] };
    const apiDoc = { ...document, components: { ...document.components, schemas: { ...document.components.schemas, Named: named } } };
    const slim = validationDocument(apiDoc, { validateResponses: false }) as unknown as typeof apiDoc;
    expect(JSON.stringify(slim.paths)).not.toMatch(/"(responses|examples?|tags)":/);
    // The routes read an operation's scopes from its security requirements.
    expect(slim.paths['/api/v3/notification_settings'].put.security).toEqual(document.paths['/api/v3/notification_settings'].put.security);
    expect(slim.components.responses).toBeUndefined();
    expect(slim.paths['/api/v3/notification_settings'].put.requestBody).toEqual(document.paths['/api/v3/notification_settings'].put.requestBody);
    // Kept: what requests refer to, directly (a request body), through another schema, and through a discriminator's
    // mapping. Dropped: what only answers use, and what nothing uses.
    expect(Object.keys(slim.components.schemas)).toEqual(expect.arrayContaining(['TokenRequest', 'RefreshTokenRequest', 'NotificationLevel']));
    expect(Object.keys(slim.components.schemas)).not.toEqual(expect.arrayContaining(['TokenResponse']));
    expect(slim.components.schemas.Named).toBeUndefined();
    // What ajv walks once per compiled check: the point of the copy.
    expect(count(slim.paths) + count(slim.components)).toBeLessThan(0.6 * (count(document.paths) + count(document.components)));

    const withAnswers = validationDocument(apiDoc, { validateResponses: true }) as unknown as typeof apiDoc;
    expect(withAnswers.components.schemas.Named).toEqual({ type: 'object', properties: { example: { type: 'string' }, examples: { type: 'integer' } } });
    expect(withAnswers.paths['/api/v3/notification_settings'].get.responses['200']).toBeDefined();
    expect(withAnswers.components.responses).toBeDefined();
    expect(document.components.schemas.Named).toBeUndefined();
  });

  it('still checks a document on request: the meta-schema is compiled on its first use, not never', async () => {
    compileDocumentCheckOnUse();
    const broken = { openapi: '3.1.0', info: { title: 'broken' }, paths: { '/x': { get: { responses: 'not an object' } } } };
    // The validator prints the document's errors as it loads it.
    const logged = console.error;
    console.error = () => undefined;
    const chain = OpenApiValidator.middleware({ apiSpec: broken as never, validateApiSpec: true }) as unknown as express.RequestHandler[];
    const errors: unknown[] = [];
    const app = express().use(chain, ((error, _req, res, _next) => {
      errors.push(error);
      res.status(500).end();
    }) as ErrorRequestHandler);
    const { url, close } = await listen(app);
    try {
      await fetch(`${url}/x`);
    } finally {
      console.error = logged;
      close();
    }
    expect(String(errors[0])).toMatch(/apiDoc was invalid/);
  });
});

describe('the warm-up before listening', () => {
  it('sends one request per operation and request content type of the document', () => {
    const requests = warmUpRequests(document);
    const bodies = document.components.requestBodies as Record<string, { content: object }>;
    const expected = Object.values(document.paths as Record<string, Record<string, { requestBody?: { content?: object; $ref?: string } }>>).flatMap((item) =>
      Object.entries(item)
        .filter(([method]) => ['get', 'put', 'post', 'delete', 'patch'].includes(method))
        .flatMap(([, { requestBody: body }]) => Object.keys((body?.$ref ? bodies[body.$ref.split('/').pop()!] : body)?.content ?? { none: 1 })),
    );
    expect(requests).toHaveLength(expected.length);
    expect(requests).toContainEqual({ method: 'GET', path: '/api/v3/notification_settings' });
    expect(requests).toContainEqual({ method: 'PUT', path: '/api/v3/projects/0/notification_settings', contentType: 'application/x-www-form-urlencoded' });
    expect(requests.every((r) => !r.path.includes('{'))).toBe(true);
  });

  it('leaves the chain answering as the validator does, from the first request on', async () => {
    const chain = openApiValidation({ validateResponses: false });
    await warmUpValidation(chain);
    const { url, close } = await listen(probe(chain));
    try {
      const ok = await rawRequest(url, 'GET', '/api/v3/projects/acme%2Fwidgets/notification_settings');
      expect(ok.status).toBe(200);
      expect(JSON.parse(ok.body).pathParams).toEqual({ id: 'acme/widgets' });
      expect((await rawRequest(url, 'GET', '/api/v3/notification_settings?unknown=1')).status).toBe(200);
      expect((await rawRequest(url, 'PUT', '/api/v3/notification_settings?level=bogus')).status).toBe(400);
      expect((await rawRequest(url, 'DELETE', '/api/v3/notification_settings')).status).toBe(405);
    } finally {
      close();
    }
  });
});

describe('answers as the validator does', () => {
  let plain: Listening;
  let cached: Listening;
  beforeAll(async () => {
    // The validator as it was configured before the cache: every step, multipart included.
    plain = await listen(probe(OpenApiValidator.middleware({ ...validatorOptions(documentPath, { validateResponses: false }), fileUploader: undefined }) as unknown as express.RequestHandler[]));
    cached = await listen(probe(openApiValidation({ validateResponses: false })));
  });
  afterAll(() => {
    plain.close();
    cached.close();
  });

  const query = fc.oneof(
    fc.constant(''),
    fc
      .array(fc.tuple(fc.constantFrom('level', 'access_token', 'new_note', 'scope', 'client_id', 'page', 'a[b]', 'x'), fc.stringMatching(/^[A-Za-z0-9%+_.-]{0,8}$/)), {
        maxLength: 3,
      })
      .map((pairs) => `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`),
  );
  const request = fc.record({
    method: fc.constantFrom('GET', 'GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS'),
    path: requestPath,
    query,
    body: fc.constantFrom(
      undefined,
      ['application/json', '{"level":"watch"}'],
      ['application/json', '{"level":"nope","extra":1}'],
      ['application/x-www-form-urlencoded', 'level=custom&new_note=true'],
      ['text/plain', 'hello'],
    ),
  });

  it('on the first request to a route and on every later one', async () => {
    await fc.assert(
      fc.asyncProperty(request, async ({ method, path: p, query: q, body }) => {
        const headers: Record<string, string> = body ? { 'content-type': body[0] } : {};
        const send = (url: string) => rawRequest(url, method, p + q, headers, body?.[1]);
        const expected = await send(plain.url);
        // Twice: the first may fill the cache, the second is answered from it.
        for (const answer of [await send(cached.url), await send(cached.url)]) {
          expect({ status: answer.status, body: answer.body }).toEqual({ status: expected.status, body: expected.body });
        }
      }),
      { numRuns: 400, seed: 2026 },
    );
  });
});
