// The document the Prism mock serves, made from openapi/openapi.yaml (still the one source) when the mock starts:
//
// * every `/api/v3` path item again under `/api/v4`, as the reference server answers both (its operationIds end in
//   `V4`, so that Prism and any tool reading the copy see distinct operations);
// * the examples' base URL (`http://127.0.0.1:3000`, the reference server's default) replaced by the mock's own, so
//   that the discovery documents, `web_url`s and verification URIs send a client to the mock;
// * CORS as the reference server answers it (packages/server/src/http/cors.ts), for Prism started with --cors=false:
//   the paths that answer any origin get the headers on every documented answer and an OPTIONS operation for the
//   preflight; the pages, introspection and the operations endpoints send none, as on the server;
// * each answer's first named example first for Prism, ahead of its schema's own (firstNamedExampleFirst).
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parse, stringify } from 'yaml';
import { areaOf } from '../../packages/server/src/http/areas.js';
import { answersAnyOrigin, corsPolicy } from '../../packages/server/src/http/cors.js';
import { openapiPath } from './paths.js';

type Json = Record<string, any>;

/** The base URL the hand-written document's examples use: the reference server's default address. */
export const documentBaseUrl = 'http://127.0.0.1:3000';
/** Prism's own default port, which `npm run mock` keeps. */
export const defaultMockPort = 4010;
/** Suffix of the operationIds of the `/api/v4` copies. */
export const v4OperationSuffix = 'V4';

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * What the mock's preflight allows a request to send. The server allows whatever a preflight asks for (it echoes
 * `Access-Control-Request-Headers`); Prism answers a fixed example, so the mock allows any header by the wildcard, and
 * `Authorization`, which the wildcard does not cover, by name (Fetch standard, CORS-preflight fetch).
 */
export const mockAllowedHeaders = 'Authorization, *';

const header = (value: string, description: string) => ({ description, schema: { type: 'string' }, example: value });

/** The CORS headers of an actual (non-preflight) answer to any origin, as the server's `cors` middleware sends them. */
export const corsResponseHeaders = (): Json => ({
  'Access-Control-Allow-Origin': header('*', 'Any origin may read the answer (without credentials).'),
  'Access-Control-Expose-Headers': header(corsPolicy.exposedHeaders.join(','), 'Headers a script may read besides the safelisted ones.'),
});

const preflightOperation = (operationId: string): Json => ({
  operationId,
  tags: ['cors'],
  summary: 'CORS preflight.',
  description: 'The answer to a CORS preflight, as the reference server gives it for any origin.',
  security: [],
  responses: {
    '204': {
      description: 'The preflight is allowed.',
      headers: {
        'Access-Control-Allow-Origin': header('*', 'Any origin.'),
        'Access-Control-Allow-Methods': header(corsPolicy.methods.join(','), 'The methods a browser app may use.'),
        'Access-Control-Allow-Headers': header(mockAllowedHeaders, 'The request headers a browser app may send.'),
        'Access-Control-Max-Age': header(String(corsPolicy.maxAge), 'How long the browser may keep this answer, in seconds.'),
        'Access-Control-Expose-Headers': header(corsPolicy.exposedHeaders.join(','), 'Headers a script may read besides the safelisted ones.'),
      },
    },
  },
});

/**
 * Makes a response's first named example the one Prism answers unasked. Prism (@stoplight/http-spec) puts the
 * schema's first `examples` entry, as an example named `default`, before a media type's named examples, so the
 * token endpoint's 400 would answer OAuthError's own example (invalid_grant) rather than its first named one
 * (unsupported_grant_type). Behind an `allOf` the schema is the same and has no examples of its own.
 */
function firstNamedExampleFirst(response: Json): void {
  for (const media of Object.values<Json>(response.content ?? {})) {
    if (media.examples && !('example' in media) && media.schema) media.schema = { allOf: [media.schema] };
  }
}

/** Every string of `value` with the document's base URL replaced (a new value; the input is left alone). */
export function rebase(value: unknown, baseUrl: string): unknown {
  if (typeof value === 'string') return value.split(documentBaseUrl).join(baseUrl);
  if (Array.isArray(value)) return value.map((v) => rebase(v, baseUrl));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rebase(v, baseUrl)]));
  return value;
}

/** A concrete path of a templated one, for the server's area rules (`{id}` becomes a segment). */
const concrete = (path: string) => path.replace(/\{[^}]+\}/g, 'x');

/** The mock's document for a mock answering at `baseUrl` (no trailing slash), from the parsed source document. */
export function mockDocument(source: Json, baseUrl: string): Json {
  const doc = rebase(source, baseUrl.replace(/\/+$/, '')) as Json;
  doc.info = { ...doc.info, description: `${doc.info.description}\n\nThis copy is the one the Prism mock at ${baseUrl} serves, generated from openapi/openapi.yaml by scripts/lib/mock-document.ts: do not edit it.\n` };
  const componentsResponses: Json = doc.components?.responses ?? {};
  const paths: Json = {};
  for (const [path, item] of Object.entries<Json>(doc.paths)) {
    const copies: Array<[string, Json, string]> = [[path, item, '']];
    if (path.startsWith('/api/v3/')) copies.push([`/api/v4/${path.slice('/api/v3/'.length)}`, structuredClone(item), v4OperationSuffix]);
    for (const [at, pathItem, suffix] of copies) {
      for (const method of methods) {
        const operation = pathItem[method] as Json | undefined;
        if (operation) operation.operationId = `${operation.operationId}${suffix}`;
      }
      const cors = answersAnyOrigin(areaOf(concrete(at)), concrete(at));
      if (cors) {
        for (const method of methods) {
          const operation = pathItem[method] as Json | undefined;
          if (!operation) continue;
          for (const [status, response] of Object.entries<Json>(operation.responses)) {
            // A shared response is copied into the operation, so that the pages using it stay without CORS headers.
            const resolved: Json = typeof response.$ref === 'string' ? structuredClone(componentsResponses[response.$ref.split('/').pop()!]) : response;
            resolved.headers = { ...resolved.headers, ...corsResponseHeaders() };
            operation.responses[status] = resolved;
          }
        }
        const first = methods.map((m) => pathItem[m] as Json | undefined).find(Boolean)!;
        pathItem.options ??= preflightOperation(`${first.operationId}Preflight`);
      }
      paths[at] = pathItem;
    }
  }
  doc.paths = paths;
  for (const { responses } of Object.values<Json>(paths).flatMap((item) => methods.map((m) => item[m] as Json | undefined).filter((o) => o !== undefined))) {
    for (const response of Object.values<Json>(responses)) firstNamedExampleFirst(response);
  }
  for (const response of Object.values<Json>(componentsResponses)) firstNamedExampleFirst(response);
  doc.tags = [...(doc.tags ?? []), { name: 'cors', description: 'CORS preflights, answered as the reference server answers them (mock only).' }];
  return doc;
}

/** The source document, parsed. */
export const sourceDocument = (): Json => parse(readFileSync(openapiPath, 'utf8')) as Json;

/** Writes the mock's document for `baseUrl` to `file` (YAML), and answers `file`. */
export async function writeMockDocument(file: string, baseUrl: string): Promise<string> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, stringify(mockDocument(sourceDocument(), baseUrl), { lineWidth: 0, aliasDuplicateObjects: false }));
  return file;
}
