// The checks compiled at build time (openapi/generated/contract.ts, http/request-validation.ts) against their oracle,
// express-openapi-validator reading the document itself: over every operation and content type of the document and
// a generated corpus, both must accept and refuse the same requests with the same status, message and problems, and
// hand a handler the same route, parameters, query and body.
import type { RequestHandler } from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledRequestValidation } from '../../src/http/request-validation.js';
import { contractDigest } from '../../src/http/contract-compiler.js';
import { validatorOptions } from '../../src/http/openapi-validation.js';
import { document, documentPath } from '../../src/openapi/document.js';
import { contractDigest as compiledDigest } from '../../src/openapi/generated/contract.js';
import { rawRequest } from '../hardening/support.js';
import { listen, probe, requestPath, type Listening } from '../support/validator-probe.js';

describe('the compiled contract', () => {
  it('was compiled from the document, the compiler and the validator as they are now (else: npm run generate)', () => {
    expect(compiledDigest, 'packages/server/src/openapi/generated/contract.ts is stale: run npm run generate').toBe(contractDigest(document));
  });

  it('goes stale when a schema of the document changes', () => {
    const changed = structuredClone(document);
    changed.components.schemas.NotificationLevel.enum.push('louder');
    expect(contractDigest(changed)).not.toBe(compiledDigest);
  });
});

interface Sample {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

const methods = ['get', 'put', 'post', 'delete', 'patch'];
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
const paths = document.paths as Record<string, Record<string, Json>>;
const requestBodyOf = (operation: Json) => (operation.requestBody?.$ref ? document.components.requestBodies[operation.requestBody.$ref.split('/').pop()] : operation.requestBody);
const form = (value: Record<string, unknown>) =>
  Object.entries(value)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(typeof v === 'object' ? JSON.stringify(v) : String(v))}`)
    .join('&');

/** Every operation with each of its content types, with its examples, an empty body and none; then bad parameters. */
function documentCorpus(): Sample[] {
  const samples: Sample[] = [];
  for (const [template, item] of Object.entries(paths)) {
    const path = template.replace(/\{[^}]+\}/g, '42');
    for (const method of methods.filter((m) => !(m in item))) samples.push({ method: method.toUpperCase(), path });
    for (const method of Object.keys(item).filter((k) => methods.includes(k))) {
      const operation = item[method];
      const METHOD = method.toUpperCase();
      samples.push({ method: METHOD, path });
      samples.push({ method: METHOD, path: template.replace(/\{[^}]+\}/g, 'acme%2Fwidgets') });
      samples.push({ method: METHOD, path: template.replace(/\{[^}]+\}/g, '0') });
      for (const [type, media] of Object.entries<Json>(requestBodyOf(operation)?.content ?? {})) {
        const examples = [...Object.values<Json>(media.examples ?? {}).map((e) => e.value), media.example, {}, { unknown: 1 }].filter((e) => e !== undefined);
        for (const example of examples) {
          samples.push({ method: METHOD, path, headers: { 'content-type': type }, body: type.includes('json') ? JSON.stringify(example) : form(example) });
        }
        samples.push({ method: METHOD, path, headers: { 'content-type': type }, body: '' });
        samples.push({ method: METHOD, path, headers: { 'content-type': `${type}; charset=UTF-8` }, body: type.includes('json') ? '{}' : '' });
      }
      const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((p: Json) => (p.$ref ? document.components.parameters[p.$ref.split('/').pop()] : p));
      for (const p of parameters.filter((p: Json) => p.in === 'query')) {
        for (const value of ['', 'true', '1', '-1', '2.5', 'watch', 'a+b', 'a,b', 'http://x/y', '%zz', 'x'.repeat(300)]) {
          samples.push({ method: METHOD, path: `${path}?${p.name}=${value}` });
        }
        samples.push({ method: METHOD, path: `${path}?${p.name}` });
        samples.push({ method: METHOD, path: `${path}?${p.name}=1&${p.name}=2` });
        samples.push({ method: METHOD, path: `${path}?${p.name}[a]=1` });
      }
    }
  }
  return samples;
}

describe('answers as express-openapi-validator does', () => {
  let oracle: Listening;
  let compiled: Listening;
  beforeAll(async () => {
    oracle = await listen(probe(OpenApiValidator.middleware(validatorOptions(documentPath, { validateResponses: false })) as unknown as RequestHandler[]));
    compiled = await listen(probe(compiledRequestValidation()));
  });
  afterAll(() => {
    oracle.close();
    compiled.close();
  });

  const same = async ({ method, path, headers = {}, body }: Sample) => {
    const expected = await rawRequest(oracle.url, method, path, headers, body);
    const answer = await rawRequest(compiled.url, method, path, headers, body);
    expect({ request: `${method} ${path} ${headers['content-type'] ?? ''} ${body ?? ''}`, status: answer.status, body: answer.body, allow: answer.headers.allow }).toEqual({
      request: `${method} ${path} ${headers['content-type'] ?? ''} ${body ?? ''}`,
      status: expected.status,
      body: expected.body,
      allow: expected.headers.allow,
    });
    return expected.status;
  };

  it('for every operation and content type of the document, its examples, and bad parameters', async () => {
    const statuses = new Set<number>();
    for (const sample of documentCorpus()) statuses.add(await same(sample));
    // The corpus reaches acceptance and every kind of refusal.
    expect([...statuses].sort()).toEqual(expect.arrayContaining([200, 400, 405, 415]));
  });

  const names = ['level', 'access_token', 'new_note', 'scope', 'client_id', 'redirect_uri', 'response_type', 'state', 'page', 'per_page', 'a[b]', 'x', 'path', 'method', 'status'];
  const query = fc.oneof(
    fc.constant(''),
    fc
      .array(fc.tuple(fc.constantFrom(...names), fc.option(fc.stringMatching(/^[A-Za-z0-9%+_.:/,'-]{0,8}$/), { nil: undefined })), { maxLength: 3 })
      .map((pairs) => `?${pairs.map(([k, v]) => (v === undefined ? k : `${k}=${v}`)).join('&')}`),
  );
  const grantTypes = Object.keys(document.components.schemas.TokenRequest.discriminator.mapping);
  const formBody = fc
    .record(
      {
        grant_type: fc.oneof(fc.constantFrom(...grantTypes), fc.constantFrom('bogus', '')),
        code: fc.constantFrom('abc', ''),
        refresh_token: fc.constantFrom('r1'),
        username: fc.constantFrom('demo', 'x'.repeat(300)),
        password: fc.constantFrom('secret-password'),
        scope: fc.constantFrom('api', 'openid profile', ''),
        client_id: fc.constantFrom('app'),
        level: fc.constantFrom('watch', 'custom', 'nope'),
        new_note: fc.constantFrom('true', 'false', 'maybe'),
        token: fc.constantFrom('t'),
        extra: fc.constantFrom('1'),
      },
      { requiredKeys: [] },
    )
    .map((v) => ['application/x-www-form-urlencoded', form(v)] as const);
  const jsonBody = fc
    .oneof(
      fc.record({ level: fc.constantFrom('watch', 'custom', 'nope', 1), new_note: fc.constantFrom(true, 'true', 'x'), extra: fc.constant(1) }, { requiredKeys: [] }),
      fc.record({ grant_type: fc.constantFrom(...grantTypes, 'bogus'), code: fc.constantFrom('c'), redirect_uri: fc.constantFrom('http://127.0.0.1/cb') }, { requiredKeys: [] }),
      fc.record({ seconds: fc.constantFrom(1, -5, 1.5, 0, '10'), username: fc.constantFrom('demo'), scopes: fc.constantFrom(['api'], [], 'api') }, { requiredKeys: [] }),
      fc.constantFrom(null, [], 'text', 1),
    )
    .map((v) => [fc.sample(fc.constantFrom('application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON'), 1)[0]!, JSON.stringify(v)] as const);
  const body = fc.oneof(
    fc.constant(undefined),
    formBody,
    jsonBody,
    fc.constantFrom(['text/plain', 'hello'] as const, ['application/x-www-form-urlencoded; charset=latin1', 'level=watch'] as const, ['multipart/form-data; boundary=x', '--x--'] as const),
  );
  const request = fc.record({ method: fc.constantFrom('GET', 'GET', 'PUT', 'POST', 'POST', 'DELETE', 'PATCH', 'OPTIONS'), path: requestPath, query, body });

  it('for generated requests', async () => {
    await fc.assert(
      fc.asyncProperty(request, async ({ method, path: p, query: q, body: b }) => {
        await same({ method, path: p + q, ...(b ? { headers: { 'content-type': b[0] }, body: b[1] } : {}) });
      }),
      { numRuns: 1500, seed: 34 },
    );
  });
});
