// The one place that knows express-openapi-validator's internals (5.6): the names of its middleware steps, the
// shape of what its metadata step attaches to a request (`req.openapi`), the order in which it tries routes, and
// where it finds its document checker and its error classes (compileDocumentCheckOnUse, refusalsWithoutStacks).
//
// Why: the validator's metadata step finds a request's operation by compiling a path-to-regexp for every documented
// route, in order, on every request, until one matches (upstream pull request #1217, unreleased as of 5.6.2); on
// the API read path that was the largest cost we could remove. Here the same routes are compiled once, in the order
// the validator scans them, and what the validator attaches to a request is remembered per method and route the
// first time it runs. Later requests to that method and route get the remembered operation with their own path
// parameters and skip the lookup; every other case (undocumented paths, 404, 405, a malformed percent-encoding)
// goes through the validator's own step, so its answers stay exactly its own. Validation itself is untouched.
//
// test/http/openapi-validation.test.ts fails loudly when an upgrade changes any of this: the step names, the route
// order (compared with the validator's own OpenApiSpecLoader) and the answers (the plain validator and the cached
// one, side by side on generated requests). When a released validator caches its lookup itself, delete this file.
import { createRequire } from 'node:module';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { pathToRegexp } from 'path-to-regexp';

interface SchemaValidatorModule {
  OpenAPISchemaValidator: new (options: object) => { validate(apiDoc: unknown): { errors: unknown[] } };
}

/**
 * The validator checks the document against the OpenAPI meta-schema only with validateApiSpec, yet compiles that
 * meta-schema at every start whatever the option (about 190 ms of a start that has 300 to spend). Here its checker
 * is built on its first use instead, so that a start without the check skips it and one with it is unchanged. The
 * validator reads the class from this module's exports each time it starts, which is what lets this work.
 */
export function compileDocumentCheckOnUse(): void {
  const module = createRequire(import.meta.url)('express-openapi-validator/dist/framework/openapi.schema.validator.js') as SchemaValidatorModule;
  const Eager = module.OpenAPISchemaValidator;
  if ((Eager as { lazy?: boolean }).lazy) return;
  module.OpenAPISchemaValidator = class OpenAPISchemaValidatorOnUse {
    static lazy = true;
    #checker: InstanceType<typeof Eager> | undefined;
    constructor(private readonly options: object) {}
    validate(apiDoc: unknown) {
      this.#checker ??= new Eager(this.options);
      return this.#checker.validate(apiDoc);
    }
  };
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

type ErrorClass = new (...args: never[]) => Error;

/** The validator's refusals below 500, the classes its steps construct from its `types` module's exports. */
const refusalClasses = ['BadRequest', 'NotFound', 'MethodNotAllowed', 'NotAcceptable', 'UnsupportedMediaType', 'RequestEntityTooLarge', 'Unauthorized', 'Forbidden'];

/**
 * The validator's refusals (a 400 for a malformed request, a 404, a 405, ...) built without capturing a stack, as
 * ours are (errors.ts): an expected answer, whose stack nobody reads, and whose capture made a flood of malformed
 * requests dearer than the same number of successful ones. Each class is replaced by a subclass, so the errors
 * stay instances of the validator's own classes; its steps read the classes from the module's exports at each use.
 */
export function refusalsWithoutStacks(): void {
  const types = createRequire(import.meta.url)('express-openapi-validator/dist/framework/types.js') as Record<string, ErrorClass & { withoutStack?: boolean }>;
  for (const name of refusalClasses) {
    const Refusal = types[name];
    if (!Refusal || Refusal.withoutStack) continue;
    types[name] = class extends Refusal {
      static override withoutStack = true;
      constructor(...args: never[]) {
        const limit = Error.stackTraceLimit;
        Error.stackTraceLimit = 0;
        try {
          super(...args);
        } finally {
          Error.stackTraceLimit = limit;
        }
      }
    };
  }
}

/**
 * The validator's chain with the lookup step replaced by the cached one and the idle steps dropped. Should a later
 * version rename a step, it runs as it is (and the tests say so).
 */
export function withCachedRouteLookup(chain: RequestHandler[], apiDoc: { paths?: Record<string, Record<string, unknown>> }): RequestHandler[] {
  return chain
    .filter((handler) => !idleSteps.has(handler.name))
    .map((handler) => (handler.name === 'metadataMiddleware' ? cachedRouteLookup(handler, documentRoutes(apiDoc)) : handler));
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
export function compareRoutes(r1: string, r2: string): number {
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

