// Requests checked against the document with the checks compiled at build time (openapi/generated/contract.ts):
// nothing is compiled or loaded at start. What express-openapi-validator does around its checks is done here the
// way it does it (version 5.6: its metadata step, its request step and their parsers), for what the document uses,
// so that a request gets the same answer, and a handler the same `req.params`, `req.query` and `req.body`, as from
// the validator: packages/server/test/http/request-validation.test.ts plays the document's operations and generated
// requests against both. The validator stays for --validate-responses (openapi-validation.ts).
import { parse as parseUrl } from 'node:url';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { parse as parseQueryString } from 'qs';
import type { AjvError, Check, ContractOperation, ContractRoute } from '../openapi/contract-table.js';
import { operations, routes } from '../openapi/generated/contract.js';
import { document } from '../openapi/document.js';

/** The validator's refusals: its error classes' shape (name, status, path, message, headers, errors). */
class ValidatorRefusal extends Error {
  readonly status: number;
  readonly path: string;
  headers?: Record<string, string>;
  errors: Array<{ path: string; message: string; errorCode?: string }>;
  constructor(status: number, name: string, path: string, message: string, headers?: Record<string, string>) {
    // An expected answer, whose stack nobody reads (as errors.ts's own refusals).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(name);
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.name = name;
    this.status = status;
    this.path = path;
    this.message = message;
    this.headers = headers;
    this.errors = [{ path, message }];
  }
}

/** What the validator attaches to a request: the route, its path parameters and the operation. */
export interface RequestOperation {
  expressRoute: string;
  openApiRoute: string;
  pathParams: Record<string, string>;
  schema: Record<string, unknown>;
  serial: number;
}

interface ValidatedRequest extends Request {
  openapi?: RequestOperation;
}

/** The operation objects of the document, which the routes read their security requirements from. */
const operationObjects = operations.map((o) => document.paths[o.openApiRoute][o.method.toLowerCase()] as Record<string, unknown>);

/** The allowed methods of a route, as the validator lists them in a 405's Allow header. */
const allowed = new Map(routes.map((r) => [r, Object.keys(r.methods).join(', ')]));

/**
 * The routes to try for a path, by its first segment: those whose first segment is that literal (or a parameter),
 * in the table's order, so that the first match is the one the validator's scan of every route would find. Routes
 * are case-insensitive, as the app's routing is.
 */
const firstSegment = (path: string) => path.slice(1, (path.indexOf('/', 1) + 1 || path.length + 1) - 1).toLowerCase();
const anyFirstSegment = routes.filter((r) => r.expressRoute.startsWith('/:'));
const routesByFirstSegment = new Map<string, ContractRoute[]>();
for (const route of routes) {
  if (route.expressRoute.startsWith('/:')) continue;
  const segment = firstSegment(route.expressRoute);
  routesByFirstSegment.set(segment, routes.filter((r) => anyFirstSegment.includes(r) || (!r.expressRoute.startsWith('/:') && firstSegment(r.expressRoute) === segment)));
}

/**
 * The routes without parameters, by their path in lower case (and with the trailing slash their pattern allows): the
 * hot paths (/api/v3/user, /api/v3/notification_settings, /oauth/token, /oauth/introspect) found with one lookup
 * instead of a pattern tried per route before them. Only a route that no route before it in the table matches is
 * here, so that the lookup finds what the scan would; a hit is checked against the route's own pattern (which also
 * keeps out a path that lower-cases to a route's but that the case-insensitive pattern does not match).
 */
const literalRoutes = new Map<string, ContractRoute>();
for (const [index, route] of routes.entries()) {
  if (route.keys.length > 0) continue;
  for (const path of [route.expressRoute, `${route.expressRoute}/`]) {
    const lower = path.toLowerCase();
    if (!route.regexp.test(lower) || routes.slice(0, index).some((earlier) => earlier.regexp.test(lower))) continue;
    literalRoutes.set(lower, route);
  }
}

/** The validator's metadata step: the route and operation, or its 404, 405 or malformed-URI refusal. */
function findOperation(req: Request): number {
  const query = req.url.indexOf('?');
  const path = query < 0 ? req.url : req.url.slice(0, query);
  const literal = literalRoutes.get(path.toLowerCase());
  const candidates = literal?.regexp.test(path) ? [literal] : (routesByFirstSegment.get(firstSegment(path)) ?? anyFirstSegment);
  for (const route of candidates) {
    const match = route.regexp.exec(path);
    if (!match) continue;
    const pathParams: Record<string, string> = {};
    try {
      for (let i = 0; i < route.keys.length; i++) pathParams[route.keys[i]!] = decodeURIComponent(match[i + 1]!);
    } catch {
      throw new ValidatorRefusal(400, 'Bad Request', req.path, "malformed uri'");
    }
    const index = route.methods[req.method];
    if (index === undefined) {
      throw new ValidatorRefusal(405, 'Method Not Allowed', req.path, `${req.method} method not allowed`, { Allow: allowed.get(route)! });
    }
    (req as ValidatedRequest).openapi = { expressRoute: route.expressRoute, openApiRoute: route.openApiRoute, pathParams, schema: operationObjects[index]!, serial: -1 };
    req.params = pathParams;
    return index;
  }
  // Every path is the validator's (the document's server has no path prefix).
  throw new ValidatorRefusal(404, 'Not Found', req.path, 'not found');
}

/**
 * The document's route of a path that no handler took (an API request refused 401 before its checks, say), for logs
 * and metrics, so that it is counted under its route rather than as unmatched; undefined outside the document.
 */
export function documentRouteOf(url: string): string | undefined {
  const path = url.split('?')[0]!;
  const candidates = routesByFirstSegment.get(firstSegment(path)) ?? anyFirstSegment;
  return candidates.find((route) => route.regexp.test(path))?.expressRoute;
}

/** A Content-Type as the validator reads it (its ContentType class): the media type and its parameters. */
class ContentType {
  readonly mediaType: string | null = null;
  readonly parameters: Record<string, string> = {};
  constructor(header: string | undefined) {
    if (!header) return;
    for (const match of header.matchAll(/;\s*([^=]+)=([^;]+)/g)) {
      const key = match[1]!.toLowerCase();
      // A charset is case-insensitive (RFC 2046 section 4.1.2).
      this.parameters[key] = key === 'charset' ? match[2]!.toLowerCase() : match[2]!;
    }
    this.mediaType = header.split(';')[0]!.toLowerCase().trim();
  }

  normalize(exclude: string[] = ['boundary']): string | undefined {
    let parameters = '';
    for (const key of Object.keys(this.parameters).sort()) if (!exclude.includes(key)) parameters += `; ${key}=${this.parameters[key]}`;
    return this.mediaType ? this.mediaType + parameters : undefined;
  }

  equivalents(): ContentType[] {
    if (!this.mediaType) return [];
    const types = [new ContentType(this.mediaType)];
    if (!this.parameters.charset) types.push(new ContentType(`${this.normalize(['charset'])}; charset=utf-8`));
    return types;
  }
}

const normalizedTypes = new Map<string, string | undefined>();
/** A declared content type, normalized once. */
function normalizedOf(type: string): string | undefined {
  if (!normalizedTypes.has(type)) normalizedTypes.set(type, new ContentType(type).normalize());
  return normalizedTypes.get(type);
}

/** The declared content type the validator checks a body against (its BodySchemaParser), or null for none. */
function declaredContentType(operation: ContractOperation, contentType: ContentType): string | null {
  const body = operation.body;
  if (!body) return null;
  const normalized = contentType.normalize();
  let found = body.types.find((type) => normalizedOf(type) == normalized);
  if (!found) {
    const equivalents = contentType.equivalents().map((e) => e.normalize());
    found = body.types.find((type) => equivalents.includes(normalizedOf(type)));
  }
  if (!found) {
    for (const type of [...body.types].sort().reverse()) {
      if (type === '*/*') {
        found = type;
        break;
      }
      if (!/^[a-z]+\/\*$/.test(type)) continue;
      if (new RegExp(`^${type.split('/', 1)[0]}/.+$`).test(String(normalized))) {
        found = type;
        break;
      }
    }
  }
  if (found) return found;
  if (normalized === undefined && body.required === false) return null;
  throw new ValidatorRefusal(415, 'Unsupported Media Type', operation.expressRoute, `unsupported media type ${normalized}`);
}

const reservedCharacters = /[:/?#[\]@!$&'()*+,;=]/;

/** The query's values as sent, by name (the validator's parseQueryStringUndecoded). */
function rawQuery(originalUrl: string): Map<string, Array<string | undefined>> {
  const pairs = new Map<string, Array<string | undefined>>();
  const query = parseUrl(originalUrl).query;
  if (!query) return pairs;
  for (const pair of query.replace('?', '').split('&')) {
    const [key, value] = pair.split('=') as [string, string | undefined];
    if (!pairs.has(key)) pairs.set(key, []);
    pairs.get(key)!.push(value);
  }
  return pairs;
}

/**
 * The request's query, parsed once: Express 5 parses req.query anew on each read, so the first reader (authentication,
 * else validation) fixes the object on the request, as the validator fixes the object it checks and coerces.
 */
export function queryOnce(req: Request): Record<string, unknown> {
  if (!req.url.includes('?')) return {};
  const query = req.query as Record<string, unknown>;
  if (!Object.prototype.hasOwnProperty.call(req, 'query')) Object.defineProperty(req, 'query', { writable: true, value: query });
  return query;
}

/** The validator's RequestParameterMutator, for what the document's parameters use: bracketed names, reserved characters. */
function prepareQuery(req: Request, operation: ContractOperation): Record<string, unknown> {
  // Without a query string there is nothing to parse, fix or check: req.query reads as the same empty object.
  if (!req.url.includes('?')) return {};
  const query = queryOnce(req);
  for (const key of Object.keys(query)) {
    if (!key.includes('[') || operation.literalBracketQuery.includes(key)) continue;
    const name = key.split('[')[0]!;
    const parsed = parseQueryString(`${key}=${query[key] as string}`) as Record<string, unknown>;
    if (parsed[name] !== undefined) {
      const existing = query[name];
      const value = parsed[name];
      query[name] =
        existing && typeof existing === 'object' && typeof value === 'object' && !Array.isArray(value) ? { ...(existing as object), ...(value as object) } : value;
    }
    delete query[key];
  }
  if (operation.query.length === 0) return query;
  const raw = rawQuery(req.originalUrl);
  for (const name of operation.query) {
    for (const value of raw.get(name) ?? []) {
      if (value?.match(reservedCharacters)) {
        throw new ValidatorRefusal(400, 'Bad Request', `/query/${name}`, `Parameter '${name}' must be url encoded. Its value may not contain reserved characters.`);
      }
    }
  }
  return query;
}

/** The validator's refusal for failed checks: ajv's first problems, worded and located as it words and locates them. */
function checkRefusal(req: Pick<Request, 'path'>, errors: AjvError[]): ValidatorRefusal {
  for (const e of errors) {
    const allowedValues = e.keyword === 'enum' ? (e.params.allowedValues as unknown[] | undefined) : undefined;
    if (allowedValues) e.message = `${e.message}: ${allowedValues.join(', ')}`;
  }
  const message = errors.map((e) => `request${e.instancePath} ${e.message}`).join(', ');
  const refusal = new ValidatorRefusal(400, 'Bad Request', req.path, message);
  refusal.errors = errors.map((e) => {
    const named = (e.params.missingProperty ?? e.params.additionalProperty ?? e.params.unevaluatedProperty) as string | undefined;
    return { path: named ? `${e.instancePath}/${named}` : (e.instancePath ?? e.schemaPath), message: e.message!, errorCode: `${e.keyword}.openapi.validation` };
  });
  return refusal;
}

const byRoute = new Map(operations.map((o, i) => [`${o.method} ${o.openApiRoute}`, i]));

/**
 * The refusal a request to the operation at `method openApiRoute` would get for these parameters and this JSON body,
 * or null: for callers that do not come over HTTP (the test kit's in-process helpers), so that they refuse what the
 * document refuses, in the same words. The body may gain the defaults the document gives, as a request's does.
 */
export function operationRefusal(method: string, openApiRoute: string, request: { query?: Record<string, unknown>; params?: Record<string, string>; body?: unknown }): Error | null {
  const index = byRoute.get(`${method} ${openApiRoute}`);
  if (index === undefined) throw new Error(`the document has no operation ${method} ${openApiRoute}`);
  const operation = operations[index]!;
  const data = { query: request.query ?? {}, headers: { 'content-type': 'application/json' }, params: request.params ?? {}, cookies: undefined, body: request.body };
  const checks: Array<[Check, unknown]> = [[operation.general, data]];
  const json = operation.bodies['application/json'];
  if (json && (request.body !== undefined || operation.body?.required)) {
    const discriminator = json.discriminator;
    const option = discriminator && (request.body as Record<string, unknown> | undefined)?.[discriminator.property];
    if (discriminator && (typeof option !== 'string' || !discriminator.options.includes(option))) {
      return new ValidatorRefusal(400, 'Bad Request', openApiRoute, `'${discriminator.property}' must be equal to one of the allowed values: ${discriminator.options.join(', ')}.`);
    }
    checks.push(discriminator ? [discriminator.checks[option as string]!, data.body] : [json.check, data]);
  }
  const errors = checks.flatMap(([check, value]) => (check(value) ? [] : (check.errors ?? [])));
  return errors.length > 0 ? checkRefusal({ path: openApiRoute }, errors) : null;
}

/** Checks a request as the validator's request step does, once its operation is known. */
function checkRequest(req: Request, operation: ContractOperation): void {
  const contentType = new ContentType(req.headers['content-type']);
  const declared = declaredContentType(operation, contentType);
  const query = prepareQuery(req, operation);
  // The validator gives a multipart request a body object (no operation declares multipart bodies, so it stays empty).
  if (contentType.mediaType === 'multipart/form-data') req.body ??= {};
  const cookies = (req as { cookies?: object }).cookies ? { ...(req as { cookies?: object }).cookies, ...(req as { signedCookies?: object }).signedCookies } : undefined;
  const data = { query, headers: req.headers, params: req.params, cookies, body: req.body as unknown };
  const body = declared === null ? undefined : operation.bodies[declared];
  let bodyCheck: Check | undefined = body?.check;
  let bodyData: unknown = data;
  if (body?.discriminator) {
    const { property, options, checks } = body.discriminator;
    const value = (req.body as Record<string, unknown>)[property];
    if (typeof value !== 'string' || !options.includes(value)) {
      throw new ValidatorRefusal(400, 'Bad Request', req.path, `'${property}' must be equal to one of the allowed values: ${options.join(', ')}.`);
    }
    bodyCheck = checks[value];
    bodyData = data.body;
  }
  const valid = operation.general(data);
  const validBody = bodyCheck ? bodyCheck(bodyData) : true;
  if (valid && validBody) return;
  throw checkRefusal(req, [...(operation.general.errors ?? []), ...((bodyCheck && bodyCheck.errors) ?? [])]);
}

/**
 * The document's checks for every request that reaches it: a refusal goes to the error handler as the validator's
 * would, in its shape (status, message, `errors`), which errors.ts words for the caller.
 */
export function compiledRequestValidation(): RequestHandler {
  return function compiledRequestValidation(req: Request, _res: Response, next: NextFunction) {
    try {
      const index = findOperation(req);
      checkRequest(req, operations[index]!);
    } catch (error) {
      return next(error);
    }
    next();
  };
}
