// The document the mock serves (scripts/lib/mock-document.ts), made from openapi/openapi.yaml when the mock starts:
// not checked in, since it names the mock's own address, so checked here as the generator makes it.
import SwaggerParser from '@apidevtools/swagger-parser';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { corsPolicy } from '../../packages/server/src/http/cors.js';
import { documentBaseUrl, mockAllowedHeaders, mockDocument, sourceDocument, writeMockDocument } from '../../scripts/lib/mock-document.js';
import { exampleApplications } from '../../scripts/lib/mock-front.js';

type Json = Record<string, any>;
const baseUrl = 'http://127.0.0.1:4321';
const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const operationsOf = (doc: Json) =>
  Object.entries<Json>(doc.paths).flatMap(([path, item]) => methods.filter((m) => item[m]).map((m) => ({ path, method: m, operation: item[m] as Json })));

describe('the mock document', () => {
  const source = sourceDocument();
  const mock = mockDocument(source, baseUrl);

  it('is a valid OpenAPI 3.1 document with the source root dialect, written as YAML', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tokenbell-mock-document-'));
    try {
      const file = await writeMockDocument(join(dir, 'mock.yaml'), baseUrl);
      const written = parse(await readFile(file, 'utf8')) as Json;
      expect(written).toEqual(mock);
      const api = (await SwaggerParser.validate(file)) as Json;
      expect(api.jsonSchemaDialect).toBe('https://json-schema.org/draft/2020-12/schema');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('serves every /api/v3 path under /api/v4 too, the same operation with an operationId of its own', () => {
    const v3 = Object.keys(source.paths).filter((p) => p.startsWith('/api/v3/'));
    expect(v3.length).toBeGreaterThan(10);
    for (const path of v3) {
      const copy = mock.paths[`/api/v4/${path.slice('/api/v3/'.length)}`] as Json | undefined;
      expect(copy, path).toBeDefined();
      for (const method of methods.filter((m) => source.paths[path][m])) {
        const { operationId, ...rest } = copy![method] as Json;
        expect(operationId).toBe(`${source.paths[path][method].operationId}V4`);
        expect(rest).toEqual(Object.fromEntries(Object.entries(mock.paths[path][method] as Json).filter(([k]) => k !== 'operationId')));
      }
    }
    const ids = operationsOf(mock).map((o) => o.operation.operationId as string);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("names the mock's own base URL wherever the examples named the server's default", () => {
    expect(JSON.stringify(mock)).not.toContain(documentBaseUrl);
    const text = JSON.stringify(mock);
    expect(text).toContain(`"issuer":"${baseUrl}"`);
    expect(text).toContain(`"token_endpoint":"${baseUrl}/oauth/token"`);
    // The source itself is left alone.
    expect(JSON.stringify(sourceDocument())).toContain(documentBaseUrl);
  });

  it('carries the CORS headers of the server on the paths that answer any origin, and none on the pages', () => {
    const exposed = corsPolicy.exposedHeaders.join(',');
    for (const path of ['/api/v3/user', '/api/v4/user', '/oauth/token', '/oauth/revoke', '/.well-known/openid-configuration', '/oauth/discovery/keys']) {
      const item = mock.paths[path] as Json;
      for (const { method, operation } of operationsOf({ paths: { [path]: item } }).filter((o) => o.method !== 'options')) {
        for (const [status, response] of Object.entries<Json>(operation.responses)) {
          expect(response.headers?.['Access-Control-Allow-Origin']?.example, `${method} ${path} ${status}`).toBe('*');
          expect(response.headers?.['Access-Control-Expose-Headers']?.example, `${method} ${path} ${status}`).toBe(exposed);
        }
      }
      const preflight = item.options.responses['204'].headers as Json;
      expect(Object.fromEntries(Object.entries(preflight).map(([name, h]) => [name, h.example]))).toEqual({
        'Access-Control-Allow-Origin': '*',
        'Access-Control-Allow-Methods': corsPolicy.methods.join(','),
        'Access-Control-Allow-Headers': mockAllowedHeaders,
        'Access-Control-Max-Age': String(corsPolicy.maxAge),
        'Access-Control-Expose-Headers': exposed,
      });
    }
    for (const path of ['/oauth/authorize', '/users/sign_in', '/oauth/introspect', '/-/health', '/profile/applications']) {
      const item = mock.paths[path] as Json;
      expect(item.options, path).toBeUndefined();
      for (const { operation } of operationsOf({ paths: { [path]: item } })) {
        for (const response of Object.values<Json>(operation.responses)) expect(JSON.stringify(response), path).not.toContain('Access-Control-');
      }
    }
    // A shared answer a page uses keeps no CORS header either.
    expect(JSON.stringify(mock.components.responses)).not.toContain('Access-Control-');
  });
});

describe("the mock front's applications", () => {
  it("are the example seed's, the document's example authorization request among them, their URIs on the server's default address moved to the mock's", () => {
    const parameters = (sourceDocument().paths['/oauth/authorize'].get.parameters as Json[]).map((p) => [p.name, p.example]);
    const { client_id, redirect_uri } = Object.fromEntries(parameters) as { client_id: string; redirect_uri: string };
    const applications = exampleApplications('https://mock.example.test/');
    const example = applications.find((a) => a.client_id === client_id);
    expect(example?.redirect_uris).toContain(redirect_uri);
    // The server's own /demo/callback is the mock's, at the address clients use (npm run mock -- --base-url).
    expect(example?.redirect_uris).toEqual(['http://127.0.0.1:8080/callback', 'https://mock.example.test/demo/callback']);
    expect(applications.map((a) => a.client_id)).toEqual(['example-client-id-0000000000000000', 'example-oidc-client-id-000000000000']);
  });
});
