// Build time only (npm run generate, and the server's build): turns the document into what the server needs to check
// requests at run time, as generated code (generated/contract.ts), so that a start compiles nothing.
//
// The checks are express-openapi-validator's own. The validator is run here, once, over one request per operation
// and request content type (the warm-up requests), and every schema it hands ajv is taken as it was handed: the
// parameters' check, the body's check for each content type, and a discriminator's check per value (which its
// preprocessor builds). ajv's standalone mode writes each as code, with the options of the ajv instance that
// compiled it. What the validator does around its checks (finding the route, choosing the body's content type,
// its refusals) is in http/request-validation.ts, from the tables written here. The validator stays the oracle:
// packages/server/test/http/request-validation.test.ts plays the document's operations and generated requests
// against both.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { pathToRegexp } from 'path-to-regexp';
import type { ContractOperation, ContractRoute } from '../openapi/contract-table.js';
import { compareRoutes, documentRoutes } from './validator-route-cache.js';
import { methods, validationDocument, validatorOptions, warmUpValidation } from './openapi-validation.js';
import { routingSettings } from './validation.js';

const require = createRequire(import.meta.url);
type AjvInstance = import('ajv').default;
const { default: Ajv2020 } = require('ajv/dist/2020') as { default: new (options: object) => AjvInstance };
const { default: standaloneCode } = require('ajv/dist/standalone') as { default: (ajv: AjvInstance, refs: Record<string, string>) => string };
const { _ } = require('ajv') as typeof import('ajv');
const { default: addFormats } = require('ajv-formats') as { default: (ajv: AjvInstance, options: object) => void };

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** The ajv options that decide what a compiled check does (the rest are the validator's fixed request options). */
const semanticOptions = ['coerceTypes', 'useDefaults', 'removeAdditional', 'allErrors', 'strictNumbers', 'strictTuples', 'allowUnionTypes'] as const;

interface Captured {
  options: Record<string, unknown>;
  schema: Json;
}

/** What each compiled check is, keyed by the validator's own cache key: `METHOD-expressRoute-contentType`. */
interface Capture {
  general: Map<string, Captured>;
  body: Map<string, Captured>;
  /** The options of the instance that compiled a schema by itself (the preprocessor's, for a discriminator's checks). */
  compiledWith: WeakMap<object, Record<string, unknown>>;
}

/** Runs the validator over every warm-up request and keeps the schemas it compiles. */
async function captureChecks(slim: Json): Promise<Capture> {
  const capture: Capture = { general: new Map(), body: new Map(), compiledWith: new WeakMap() };
  const core = require('ajv/dist/core') as { default: { prototype: { addSchema: (...args: unknown[]) => unknown; compile: (...args: unknown[]) => unknown } } };
  const original = core.default.prototype.addSchema;
  const originalCompile = core.default.prototype.compile;
  core.default.prototype.compile = function (this: AjvInstance & { opts: Record<string, unknown> }, schema: unknown, ...rest: unknown[]) {
    if (schema !== null && typeof schema === 'object') capture.compiledWith.set(schema, Object.fromEntries(semanticOptions.map((o) => [o, this.opts[o]])));
    return originalCompile.call(this, schema, ...rest);
  };
  core.default.prototype.addSchema = function (this: AjvInstance & { opts: Record<string, unknown> }, schema: unknown, key?: unknown, ...rest: unknown[]) {
    if (typeof key === 'string' && /^[A-Z]+-\//.test(key)) {
      const options = Object.fromEntries(semanticOptions.map((o) => [o, this.opts[o]]));
      // The parameters' check is the one made with type coercion forced on (the validator's comment: "everything
      // but the body").
      (this.opts.coerceTypes === true ? capture.general : capture.body).set(key, { options, schema });
    }
    return original.call(this, schema, key, ...rest);
  };
  try {
    const chain = OpenApiValidator.middleware(validatorOptions(slim, { validateResponses: false })) as unknown as RequestHandler[];
    await warmUpValidation(chain, { apiDoc: slim });
  } finally {
    core.default.prototype.addSchema = original;
    core.default.prototype.compile = originalCompile;
  }
  return capture;
}

/** An ajv configured as the validator configures its request instances, writing code instead of functions. */
function codeWriter(options: Record<string, unknown>, components: Json): AjvInstance {
  const ajv = new Ajv2020({
    strict: false,
    validateSchema: false,
    ...options,
    code: { source: true, esm: false, lines: false, optimize: true, formats: _`formats` },
  });
  // As formats.ts has them, which the written code reads.
  addFormats(ajv, { mode: 'fast' });
  ajv.addFormat('media-range', true);
  // The validator adds every component schema under its own pointer, which a discriminator's checks refer to.
  for (const [id, schema] of Object.entries(components?.schemas ?? {})) ajv.addSchema(withoutAnnotations(schema), `#/components/schemas/${id}`);
  return ajv;
}

const annotations = new Set(['title', 'description', 'examples', 'example', '$comment', 'deprecated', 'externalDocs', 'xml']);
const schemaMaps = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const schemaLists = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const subschemas = new Set(['items', 'not', 'if', 'then', 'else', 'additionalProperties', 'unevaluatedProperties', 'unevaluatedItems', 'contains', 'propertyNames', 'additionalItems']);

/**
 * A copy of a schema without its annotations, which change no check: ajv embeds each written check's schema in the
 * code, and the descriptions are most of the document. Keys are dropped only where they are keywords, never where
 * they name a property.
 */
export function withoutAnnotations(schema: Json): Json {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const copy: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (annotations.has(key) || (key.startsWith('x-') && !key.startsWith('x-eov-'))) continue;
    if (schemaMaps.has(key) && value !== null && typeof value === 'object') copy[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutAnnotations(v)]));
    else if (schemaLists.has(key) && Array.isArray(value)) copy[key] = value.map(withoutAnnotations);
    else if (subschemas.has(key)) copy[key] = withoutAnnotations(value);
    else copy[key] = value;
  }
  return copy;
}

type Operation = ContractOperation<string>;

/**
 * Every route's methods in the order the validator lists them in a 405's Allow header: its loader lists every route
 * and method in the document's order and sorts the whole list by route, with a comparison that calls equal routes
 * unequal, which is what decides the order of one route's methods. The same list sorted the same way gives it.
 */
function allowOrders(apiDoc: Json): Map<string, string[]> {
  const listed: { expressRoute: string; method: string }[] = [];
  for (const [path, item] of Object.entries<Json>(apiDoc.paths)) {
    for (const key of Object.keys(item)) {
      if (key.startsWith('x-') || ['parameters', 'summary', 'description'].includes(key)) continue;
      listed.push({ expressRoute: documentRoutes({ paths: { [path]: { [key]: {} } } })[0]!, method: key });
    }
  }
  listed.sort((a, b) => compareRoutes(a.expressRoute, b.expressRoute));
  const orders = new Map<string, string[]>();
  for (const { expressRoute, method } of listed) orders.set(expressRoute, [...(orders.get(expressRoute) ?? []), method]);
  return orders;
}

/** The parameters of an operation with its path item's, as the validator merges them. */
function parametersOf(doc: Json, item: Json, operation: Json): Json[] {
  const resolve = (p: Json) => (p.$ref ? doc.components.parameters[p.$ref.split('/').pop()] : p);
  const own = (operation.parameters ?? []).map(resolve);
  const inherited = (item.parameters ?? []).map(resolve).filter((p: Json) => !own.some((o: Json) => o.name === p.name && o.in === p.in));
  return [...own, ...inherited];
}

/**
 * The validator mutates a request's parameters for styles, explode, content and arrays or objects; the run-time
 * side implements none of that, since the document uses none of it. A document that starts to stops the build here
 * rather than being checked differently.
 */
function assertSupportedParameter(where: string, p: Json, doc: Json): void {
  // The validator dereferences a parameter's schema before looking at its type.
  const schema = p.schema?.$ref ? doc.components.schemas[p.schema.$ref.split('/').pop()] : p.schema;
  const structured = schema?.type === 'object' || schema?.type === 'array' || (p.in === 'query' && ['allOf', 'oneOf', 'anyOf', '$ref'].some((k) => schema?.[k] !== undefined));
  const unsupported =
    (p.in !== 'query' && p.in !== 'path') ||
    p.content !== undefined ||
    (p.style !== undefined && p.style !== (p.in === 'query' ? 'form' : 'simple')) ||
    (p.explode !== undefined && p.explode !== (p.in === 'query')) ||
    structured;
  if (unsupported) {
    throw new Error(`${where}: parameter '${p.name}' (in ${p.in}) uses what the compiled contract does not implement; extend packages/server/src/http/contract-compiler.ts and http/request-validation.ts`);
  }
}

export interface CompiledContract {
  /** The generated module's source. */
  source: string;
  /** What it was compiled from (contractDigest), which the module records. */
  digest: string;
}

/**
 * The code writers, one ajv per distinct set of options (each a section of the module), and the checks written so far.
 * The validator's parameter and body checks carry the whole document in their root, so that their references
 * (`#/components/...`) resolve inside it; written out, each would embed the document. Here the root is left out and
 * the checks are keyed by a fragment, so those references resolve to the component schemas added under the same
 * pointers (the same objects), as the validator's discriminator checks already do.
 */
class CodeWriters {
  readonly #writers = new Map<string, { ajv: AjvInstance; refs: Record<string, string> }>();
  readonly #written = new Map<string, string>();
  #counter = 0;

  constructor(private readonly components: Json) {}

  /** The check's reference in the module (`section0.c12`). */
  add(captured: Captured): string {
    const optionsKey = JSON.stringify(captured.options);
    if (!this.#writers.has(optionsKey)) this.#writers.set(optionsKey, { ajv: codeWriter(captured.options, this.components), refs: {} });
    const section = [...this.#writers.keys()].indexOf(optionsKey);
    const writer = this.#writers.get(optionsKey)!;
    const { paths: _paths, components: _components, ...root } = captured.schema;
    const schema = withoutAnnotations(root);
    // The same check (a body that JSON and a form share) is written once.
    const identity = `${optionsKey} ${JSON.stringify(schema)}`;
    const known = this.#written.get(identity);
    if (known) return known;
    const name = `c${this.#counter++}`;
    writer.ajv.addSchema(schema, `#/compiled/${name}`);
    writer.refs[name] = `#/compiled/${name}`;
    const reference = `section${section}.${name}`;
    this.#written.set(identity, reference);
    return reference;
  }

  /** Each section's code, exporting its checks on an object. */
  sections(): string[] {
    return [...this.#writers.values()].map(({ ajv, refs }, i) => `const section${i} = ((exports) => {\n${standaloneCode(ajv, refs)}\nreturn exports;\n})({});`);
  }
}

/** An operation's table entry, its checks written and referred to. */
function operationEntry(slim: Json, capture: Capture, writers: CodeWriters, route: { expressRoute: string; openApiRoute: string }, method: string): Operation {
  const { expressRoute, openApiRoute } = route;
  const item = slim.paths[openApiRoute];
  const operation = item[method];
  const METHOD = method.toUpperCase();
  const parameters = parametersOf(slim, item, operation);
  for (const p of parameters) assertSupportedParameter(`${METHOD} ${openApiRoute}`, p, slim);
  const requestBody = operation.requestBody?.$ref ? slim.components.requestBodies[operation.requestBody.$ref.split('/').pop()] : operation.requestBody;
  const types = Object.keys(requestBody?.content ?? {});
  // The validator parses JSON inside multipart fields; request-validation.ts does not.
  if (types.some((t) => t.toLowerCase().startsWith('multipart/'))) throw new Error(`${METHOD} ${openApiRoute}: multipart request bodies are not implemented by the compiled contract`);
  const keyOf = (type: string) => `${METHOD}-${expressRoute}-${type}`;
  const generalCapture = capture.general.get(keyOf(types[0] ?? 'not_provided'));
  if (!generalCapture) throw new Error(`the validator compiled no check for ${METHOD} ${openApiRoute}`);
  const bodies: Operation['bodies'] = {};
  for (const type of types) {
    const bodyCapture = capture.body.get(keyOf(type));
    if (!bodyCapture) throw new Error(`the validator compiled no check for ${METHOD} ${openApiRoute} with ${type}`);
    bodies[type] = { check: writers.add(bodyCapture) };
    const discriminator = bodyCapture.schema.properties?.body?._discriminator as
      | { property: string; options: { option: string }[]; validators: Record<string, { schema: Json }> }
      | undefined;
    if (discriminator) {
      const checks = Object.entries(discriminator.validators).map(([option, validate]) => {
        const options = capture.compiledWith.get(validate.schema);
        if (!options) throw new Error('a discriminator check was compiled by an instance this build did not see');
        return [option, writers.add({ options, schema: validate.schema })];
      });
      bodies[type]!.discriminator = { property: discriminator.property, options: discriminator.options.map((o) => o.option), checks: Object.fromEntries(checks) };
    }
  }
  return {
    method: METHOD,
    openApiRoute,
    expressRoute,
    query: parameters.filter((p) => p.in === 'query' && !p.allowReserved).map((p) => p.name),
    literalBracketQuery: parameters.filter((p) => p.in === 'query' && p.name.includes('[')).map((p) => p.name),
    body: requestBody?.content ? { required: requestBody.required, types } : null,
    general: writers.add(generalCapture),
    bodies,
  };
}

/** Compiles the document (as JSON) into the source of generated/contract.ts. */
export async function compileContract(document: Json): Promise<CompiledContract> {
  const digest = contractDigest(document);
  const slim = validationDocument(structuredClone(document), { validateResponses: false }) as Json;
  const capture = await captureChecks(slim);
  const writers = new CodeWriters(slim.components);
  const orders = allowOrders(slim);
  const operations: Operation[] = [];
  const routes: ContractRoute[] = documentRoutes(slim).map((expressRoute) => {
    // As the validator compiles its routes (path-to-regexp 8 has no strict mode; its routes always allow a trailing slash).
    const { regexp, keys } = pathToRegexp(expressRoute, { sensitive: routingSettings['case sensitive routing'] });
    const openApiRoute = Object.keys(slim.paths).find((p) => p.replace(/\{([^}]+)\}/g, ':$1') === expressRoute);
    if (!openApiRoute) throw new Error(`no document path for the route ${expressRoute}`);
    const byMethod: Record<string, number> = {};
    for (const method of orders.get(expressRoute)!.filter((m) => methods.includes(m))) {
      byMethod[method.toUpperCase()] = operations.push(operationEntry(slim, capture, writers, { expressRoute, openApiRoute }, method)) - 1;
    }
    return { expressRoute, openApiRoute, regexp, keys: keys.map((k) => k.name), methods: byMethod };
  });
  return { source: moduleSource(digest, writers.sections(), operations, routes), digest };
}

/** The generated module: the checks' sections, then the operations and routes that refer to them. */
function moduleSource(digest: string, sections: string[], operations: Operation[], routes: ContractRoute[]): string {
  const json = JSON.stringify;
  const operationSource = (o: Operation) => {
    const bodies = Object.entries(o.bodies).map(([type, b]) => {
      const checks = b.discriminator ? Object.entries(b.discriminator.checks).map(([option, check]) => `${json(option)}: ${check}`) : [];
      const discriminator = b.discriminator ? `, discriminator: { property: ${json(b.discriminator.property)}, options: ${json(b.discriminator.options)}, checks: { ${checks.join(', ')} } }` : '';
      return `${json(type)}: { check: ${b.check}${discriminator} }`;
    });
    return `  { method: ${json(o.method)}, openApiRoute: ${json(o.openApiRoute)}, expressRoute: ${json(o.expressRoute)}, query: ${json(o.query)}, literalBracketQuery: ${json(o.literalBracketQuery)}, body: ${json(o.body)}, general: ${o.general}, bodies: { ${bodies.join(', ')} } },`;
  };
  const routeSource = (r: ContractRoute) =>
    `  { expressRoute: ${json(r.expressRoute)}, openApiRoute: ${json(r.openApiRoute)}, regexp: new RegExp(${json(r.regexp.source)}, ${json(r.regexp.flags)}), keys: ${json(r.keys)}, methods: ${json(r.methods)} },`;
  return `// @ts-nocheck
// Generated from openapi/openapi.yaml by packages/server/src/http/contract-compiler.ts (npm run generate, and the
// server's build): do not edit. The request checks of express-openapi-validator, compiled ahead of time by ajv's
// standalone mode, and the route table; read by http/request-validation.ts.
import { createRequire } from 'node:module';
import type { ContractOperation, ContractRoute } from '../contract-table.js';
import { formats } from '../formats.js';

const require = createRequire(import.meta.url);

/** What this was compiled from (contract-compiler.ts's contractDigest). */
export const contractDigest = ${json(digest)};

${sections.join('\n\n')}

/** Every operation: its query parameters, its request body's content types, and its checks. */
export const operations: ContractOperation[] = [
${operations.map(operationSource).join('\n')}
];

/** The routes in the order the validator tries them (its first match wins), each with its operations by method. */
export const routes: ContractRoute[] = [
${routes.map(routeSource).join('\n')}
];
`;
}

/**
 * What the generated module was made from: the document, this compiler, and the versions of the validator and ajv
 * whose checks it writes. A change to any of them makes the module stale (scripts/compile-contract.ts rebuilds it,
 * and a test fails until it is rebuilt).
 */
export function contractDigest(document: Json): string {
  const versions = ['express-openapi-validator/package.json', 'ajv/package.json', 'ajv-formats/package.json'].map((p) => (require(p) as { version: string }).version);
  const compiler = readFileSync(fileURLToPath(import.meta.url), 'utf8');
  return createHash('sha256').update(JSON.stringify(document)).update(compiler).update(versions.join(' ')).digest('hex');
}
