// The request validator (express-openapi-validator) configured for the document, and its warm-up before listening:
// what checks requests and answers with --validate-responses, and the oracle the compiled checks are held to.
// The validator's route lookup is cached by validator-route-cache.ts, the one module that knows its internals.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { testHelpersPath } from './areas.js';
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { document } from '../openapi/document.js';
import { compileDocumentCheckOnUse, refusalsWithoutStacks, withCachedRouteLookup } from './validator-route-cache.js';
import { routingSettings } from './validation.js';

export interface ValidationOptions {
  validateResponses: boolean;
}

/** The validator's middleware chain for the document, with the route lookup cached. */
export function openApiValidation({ validateResponses }: ValidationOptions): RequestHandler[] {
  compileDocumentCheckOnUse();
  refusalsWithoutStacks();
  const chain = OpenApiValidator.middleware(validatorOptions(validationDocument(document, { validateResponses }), { validateResponses })) as unknown as RequestHandler[];
  return withCachedRouteLookup(chain, document);
}

/**
 * How the validator is configured for the document given as `apiSpec`: here, in the contract compiler that compiles
 * its checks, and in the test that holds the compiled checks to it.
 */
export function validatorOptions(apiSpec: DocumentObject | string, { validateResponses }: ValidationOptions): ValidatorOptions {
  return {
    apiSpec,
    validateApiSpec: false,
    // Unknown query parameters are ignored, as the service ignores them and RFC 6749 section 3.1 requires of the
    // authorization endpoint: clients send extra ones (python-gitlab sends `id` on settings GETs). Known ones are
    // still checked strictly.
    validateRequests: { allowUnknownQueryParameters: true },
    validateResponses: validateResponses ? { removeAdditional: false } : false,
    // The security schemes are enforced by apiAuthentication and the routes; the validator checks shapes only.
    validateSecurity: false,
    // The v4 alias rewrites req.url; the validator must see the rewritten path.
    useRequestUrl: true,
    // No operation takes multipart/form-data, so the multipart step would only pass every request on.
    fileUploader: false,
  };
}

type ValidatorOptions = Parameters<typeof OpenApiValidator.middleware>[0];

/** The document as an object, as the validator's `apiSpec` takes it. */
type DocumentObject = Exclude<ValidatorOptions['apiSpec'], string>;
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

// Objects whose keys are names chosen by the document's authors (a property may be called "example"), not keywords.
const nameMaps = new Set(['paths', 'properties', 'patternProperties', '$defs', 'schemas', 'parameters', 'requestBodies', 'responses', 'headers', 'content', 'encoding', 'securitySchemes', 'scopes', 'mapping', 'variables', 'links', 'callbacks', 'dependentSchemas']);
const annotations = new Set(['example', 'examples']);

/**
 * A copy of the document with only what the validator reads. Every check it compiles carries the whole `paths` and
 * `components` (so that references resolve), and ajv walks all of it once more for each of them: what the validator
 * never uses costs start-up time once per operation. Examples are annotations; the answers, and the components only
 * answers refer to, matter only when responses are validated.
 */
export function validationDocument(apiDoc: Record<string, Json>, { validateResponses }: ValidationOptions): DocumentObject {
  const copy = (value: Json, key: string | undefined, parentIsNameMap: boolean): Json => {
    if (Array.isArray(value)) return value.map((item) => copy(item, undefined, false));
    if (value === null || typeof value !== 'object') return value;
    const isNameMap = key !== undefined && !parentIsNameMap && nameMaps.has(key) && !Array.isArray(value);
    const result: Record<string, Json> = {};
    for (const [k, v] of Object.entries(value)) {
      if (!isNameMap && annotations.has(k)) continue;
      result[k] = copy(v, k, isNameMap);
    }
    return result;
  };
  const slim = copy(apiDoc, undefined, false) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  for (const item of Object.values<Record<string, { responses?: unknown; tags?: unknown }>>(slim.paths ?? {})) {
    for (const method of methods) {
      const operation = item[method];
      if (!operation) continue;
      // Tags only group the reference. (Security stays: the routes read an operation's scopes from it.)
      delete operation.tags;
      if (!validateResponses) delete operation.responses;
    }
  }
  if (!validateResponses && slim.components) {
    delete slim.components.responses;
    delete slim.components.headers;
    // The schemas that only answers use.
    const used = referencedComponents(slim);
    for (const kind of ['schemas', 'parameters', 'requestBodies'] as const) {
      const entries = slim.components[kind] as Record<string, unknown> | undefined;
      for (const name of Object.keys(entries ?? {})) if (!used.has(`#/components/${kind}/${name}`)) delete entries![name];
    }
  }
  return slim as unknown as DocumentObject;
}

/** Every component that `paths` refers to, directly or through other components (discriminator mappings included). */
function referencedComponents(apiDoc: Record<string, any>): Set<string> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const used = new Set<string>();
  const pending: unknown[] = [apiDoc.paths];
  const visit = (value: unknown, key?: string): void => {
    if (Array.isArray(value)) return value.forEach((item) => visit(item));
    if (value === null || typeof value !== 'object') {
      if ((key === '$ref' || key === 'mapping') && typeof value === 'string' && value.startsWith('#/components/') && !used.has(value)) {
        used.add(value);
        const [, , kind, name] = value.split('/');
        pending.push(apiDoc.components?.[kind!]?.[name!]);
      }
      return;
    }
    // A mapping's values are references too, under the names of the discriminator's values.
    for (const [k, v] of Object.entries(value)) visit(v, key === 'mapping' ? 'mapping' : k);
  };
  while (pending.length > 0) visit(pending.pop());
  return used;
}

interface RequestBody {
  $ref?: string;
  content?: Record<string, unknown>;
}

/** The HTTP methods an OpenAPI path item may hold operations for. */
export const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** One request per documented operation and request content type (or none), in the document's own order. */
export function warmUpRequests(apiDoc: {
  paths?: Record<string, Record<string, unknown>>;
  components?: { requestBodies?: Record<string, RequestBody> };
}): { method: string; path: string; contentType?: string }[] {
  // Request bodies may be shared in components (a local $ref); nothing else is referred to here.
  const resolve = (body: RequestBody | undefined) => (body?.$ref ? apiDoc.components?.requestBodies?.[body.$ref.split('/').pop()!] : body);
  const requests: { method: string; path: string; contentType?: string }[] = [];
  for (const [template, item] of Object.entries(apiDoc.paths ?? {})) {
    const path = template.replace(/\{[^}]+\}/g, '0');
    for (const method of methods) {
      const operation = item[method] as { requestBody?: RequestBody } | undefined;
      if (!operation) continue;
      const types = Object.keys(resolve(operation.requestBody)?.content ?? {});
      if (types.length === 0) requests.push({ method: method.toUpperCase(), path });
      for (const contentType of types) requests.push({ method: method.toUpperCase(), path, contentType });
    }
  }
  return requests;
}

/**
 * Has the validator load the document and compile its checks for every operation the instance serves now, before
 * the server listens, instead of on the first request to each: compiled on the spot, an operation's checks made its
 * first request 7 to 9 times slower than the next (35-55 ms against 5, since each check carries the whole
 * document), and the first request of all also waited for the document to load. The requests go through the same
 * chain over loopback in a bare app, without authentication, which on the real app answers first; whether they pass
 * validation does not matter, only that their validators were built. Without test helpers, their operations are
 * never validated (the area answers 404 before), so they are not compiled.
 */
export async function warmUpValidation(chain: RequestHandler[], { testHelpers = true, apiDoc = document }: { testHelpers?: boolean; apiDoc?: Parameters<typeof warmUpRequests>[0] } = {}): Promise<void> {
  const requests = warmUpRequests(apiDoc).filter(({ path }) => testHelpers || !testHelpersPath.test(path));
  const app = express();
  for (const [setting, value] of Object.entries(routingSettings)) app.set(setting, value);
  const answer = (res: Response) => res.status(204).end();
  const answerError: ErrorRequestHandler = (_error, _req, res, _next) => answer(res);
  app.use(chain, (_req: Request, res: Response) => answer(res), answerError);
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (const { method, path, contentType } of requests) {
      await new Promise<void>((resolve, reject) => {
        const headers = contentType ? { 'content-type': contentType, 'content-length': '0' } : {};
        http
          .request({ host: '127.0.0.1', port, method, path, headers, agent }, (response) => response.resume().once('end', resolve))
          .once('error', reject)
          .end();
      });
    }
  } finally {
    agent.destroy();
    server.closeAllConnections();
    server.close();
  }
}
