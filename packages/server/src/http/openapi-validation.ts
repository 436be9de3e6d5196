// The request validator (express-openapi-validator) with its route lookup answered from a table compiled once.
//
// The validator's metadata middleware finds a request's operation by compiling a path-to-regexp for every
// documented route, in order, on every request, until one matches (upstream issue: express-openapi-validator
// pull request #1217, unreleased as of 5.6.2); on the API read path that was the largest cost we could remove.
// Here the same routes are compiled once, in the order the validator scans them, and what the validator attaches
// to a request (`req.openapi`: the operation and its route) is remembered per method and route the first time it
// runs. Later requests to that method and route get the remembered operation with their own path parameters and
// skip the lookup; every other case (undocumented paths, 404, 405, a malformed percent-encoding) goes through the
// validator's own middleware, so its answers stay exactly its own. Validation itself is untouched.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { pathToRegexp } from 'path-to-regexp';
import { document, documentPath } from '../openapi/document.js';

export interface ValidationOptions {
  validateResponses: boolean;
}

/** The validator's `req.openapi`, as its metadata step sets it. */
interface OpenApiMetadata {
  expressRoute: string;
  openApiRoute: string;
  pathParams: Record<string, string>;
  schema: unknown;
  serial: unknown;
  _responseSchema?: unknown;
}

interface OpenApiRequest extends Request {
  openapi?: OpenApiMetadata;
}

/** The validator's middleware chain for the document, with the route lookup cached. */
export function openApiValidation({ validateResponses }: ValidationOptions): RequestHandler[] {
  const chain = OpenApiValidator.middleware({
    apiSpec: documentPath,
    validateApiSpec: false,
    validateRequests: { allowUnknownQueryParameters: false },
    validateResponses: validateResponses ? { removeAdditional: false } : false,
    // The security schemes are enforced by apiAuthentication and the routes; the validator checks shapes only.
    validateSecurity: false,
    // The v4 alias rewrites req.url; the validator must see the rewritten path.
    useRequestUrl: true,
    // No operation takes multipart/form-data, so the multipart step would only pass every request on.
    fileUploader: false,
  }) as unknown as RequestHandler[];
  // Steps are found by the names the validator gives them; should a later version rename one, it runs as is.
  return chain
    .filter((handler) => !idleSteps.has(handler.name))
    .map((handler) => (handler.name === 'metadataMiddleware' ? cachedRouteLookup(handler, documentRoutes(document)) : handler));
}

/**
 * Steps that do nothing with these options, each an Express layer and a promise turn per request: the security
 * step only passes the request on when validateSecurity is false, and the path-parameter step only registers
 * app.param handlers, which apply to routes declared on the app itself (this app declares none: every route
 * lives in a router).
 */
const idleSteps = new Set(['securityMiddleware', 'pathParamsMiddleware']);

/** The validator's route order and syntax: as express-openapi-validator 5.6's OpenApiSpecLoader lists them. */
export function documentRoutes(apiDoc: { paths?: Record<string, Record<string, unknown>> }): string[] {
  // The document's server is `{base_url}` (scheme, host, port and optional prefix), whose default has no path:
  // the routes are the paths as written. A route the validator would prefix never matches here, so it is never
  // remembered (see the check in cachedRouteLookup) and stays with the validator's own lookup.
  const routes: string[] = [];
  for (const [path, item] of Object.entries(apiDoc.paths ?? {})) {
    for (const key of Object.keys(item)) {
      if (key.startsWith('x-') || ['parameters', 'summary', 'description'].includes(key)) continue;
      routes.push(path.split(':').map(toExpressParams).join('\\:'));
    }
  }
  routes.sort(compareRoutes);
  return [...new Set(routes)];
}

function toExpressParams(part: string): string {
  if (/[*]/.test(part)) return part.replace(/\/{([^}]+)}\({0,1}(\*)\){0,1}/g, '/$2$1').replace(/\{([^/}]+)}/g, ':$1');
  return part.replace(/\/{([^}]+)}\({0,1}(\*)\){0,1}/g, '/:$1$2').replace(/\{([^}]+)}/g, ':$1');
}

/** Static routes before dynamic ones, as the validator sorts them (its first match wins, so the order matters). */
function compareRoutes(r1: string, r2: string): number {
  const e1 = r1.replace(/\/:/g, '/~');
  const e2 = r2.replace(/\/:/g, '/~');
  if (e1.startsWith(e2)) return -1;
  if (e2.startsWith(e1)) return 1;
  return e1 > e2 ? 1 : -1;
}

/** What the validator attaches to a request (its `req.openapi`), less the request's own path parameters. */
interface Operation {
  expressRoute: string;
  openApiRoute: string;
  schema: unknown;
  serial: unknown;
  /** Present when responses are validated. */
  responseSchema?: { value: unknown };
}
const operationKeys = new Set(['expressRoute', 'openApiRoute', 'pathParams', 'schema', 'serial', '_responseSchema']);

interface CompiledRoute {
  expressRoute: string;
  regexp: RegExp;
  keys: string[];
  /** By request method, once the validator has found them. */
  operations: Map<string, Operation>;
}

function cachedRouteLookup(validatorLookup: RequestHandler, routes: string[]): RequestHandler {
  let compiled: CompiledRoute[] | undefined;

  const compile = (req: Request): CompiledRoute[] => {
    // The validator reads these two settings on every request; they are fixed once the app is built.
    const options = { sensitive: req.app.enabled('case sensitive routing'), strict: req.app.enabled('strict routing') };
    return routes.map((expressRoute) => {
      const { regexp, keys } = pathToRegexp(expressRoute, options);
      return { expressRoute, regexp, keys: keys.map((k) => k.name), operations: new Map() };
    });
  };

  return function cachedMetadataMiddleware(req: Request, res: Response, next: NextFunction) {
    compiled ??= compile(req);
    const path = req.url.split('?')[0]!;
    let route: CompiledRoute | undefined;
    let match: RegExpExecArray | null = null;
    for (const candidate of compiled) {
      match = candidate.regexp.exec(path);
      if (match) {
        route = candidate;
        break;
      }
    }
    const operation = route?.operations.get(req.method);
    if (operation && match && route) {
      let values: string[];
      try {
        values = match.slice(1).map(decodeURIComponent);
      } catch {
        // The validator answers a malformed percent-encoding with its own 400.
        return validatorLookup(req, res, next);
      }
      const pathParams: Record<string, string> = {};
      for (let i = 0; i < route.keys.length; i++) pathParams[route.keys[i]!] = values[i]!;
      // A literal in the validator's own shape: spreading a remembered object costs more than the lookup saved.
      const openapi: OpenApiMetadata = {
        expressRoute: operation.expressRoute,
        openApiRoute: operation.openApiRoute,
        pathParams,
        schema: operation.schema,
        serial: operation.serial,
      };
      if (operation.responseSchema) openapi._responseSchema = operation.responseSchema.value;
      (req as OpenApiRequest).openapi = openapi;
      req.params = pathParams;
      return next();
    }
    return validatorLookup(req, res, (error?: unknown) => {
      const found = (req as OpenApiRequest).openapi;
      // Remembered only when the validator chose the route this table chose for the same path, and attached
      // nothing this copy would leave out.
      if (
        error === undefined &&
        route !== undefined &&
        found !== undefined &&
        found.expressRoute === route.expressRoute &&
        Object.keys(found).every((k) => operationKeys.has(k))
      ) {
        route.operations.set(req.method, {
          expressRoute: found.expressRoute,
          openApiRoute: found.openApiRoute,
          schema: found.schema,
          serial: found.serial,
          ...('_responseSchema' in found ? { responseSchema: { value: found._responseSchema } } : {}),
        });
      }
      next(error);
    });
  };
}

interface RequestBody {
  $ref?: string;
  content?: Record<string, unknown>;
}

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

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
 * Has the validator load the document and compile its checks for every operation now, before the server listens,
 * instead of on the first request to each (which paid about half a second for the first of all). The requests go
 * through the same chain over loopback in a bare app, without authentication, which on the real app answers
 * first; whether they pass validation does not matter, only that their validators were built. `like` is the app
 * the chain serves, whose routing settings the route table is compiled with.
 */
export async function warmUpValidation(chain: RequestHandler[], like: express.Application): Promise<void> {
  const app = express();
  for (const setting of ['case sensitive routing', 'strict routing', 'query parser']) app.set(setting, like.get(setting));
  const answer = (res: Response) => res.status(204).end();
  const answerError: ErrorRequestHandler = (_error, _req, res, _next) => answer(res);
  app.use(chain, (_req: Request, res: Response) => answer(res), answerError);
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (const { method, path, contentType } of warmUpRequests(document)) {
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
