// The document as the contract suite checks answers against it: every documented status, header and body schema.
import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { type DocumentedOperation, listOperations, operationFor } from '../../scripts/lib/openapi-operations.js';
import { openapiPath } from '../../scripts/lib/paths.js';
import type { Exchange } from './context.js';

export interface ContractDocument {
  operations: DocumentedOperation[];
  /** What is wrong with the exchange as an answer of `operationId` (status, headers, media type, body); [] when nothing. */
  problems(operationId: string, exchange: Exchange): string[];
}

/**
 * A header as its schema reads it: headers are text on the wire (OpenAPI's `simple` style), so a numeric schema sees
 * the number the text spells, or the text itself when it spells none (and fails as it should).
 */
function headerValue(schema: unknown, text: string): unknown {
  const type = (schema as { type?: unknown } | undefined)?.type;
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(text.trim())) return Number(text);
  return text;
}

export async function loadContractDocument(): Promise<ContractDocument> {
  const doc = (await SwaggerParser.dereference(openapiPath)) as Record<string, unknown>;
  const operations = listOperations(doc);
  const ajv = new Ajv2020.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  // Dereferencing shares one object per $ref target, so compiling once per object covers every use.
  const compiled = new WeakMap<object, ValidateFunction>();
  const validate = (schema: unknown, value: unknown): string | undefined => {
    if (typeof schema !== 'object' || schema === null) return undefined;
    let fn = compiled.get(schema);
    if (!fn) compiled.set(schema, (fn = ajv.compile(schema)));
    if (fn(value)) return undefined;
    // Ajv's own text leaves out which property was extra or missing, the first thing one wants to know.
    return (fn.errors ?? [])
      .map((e) => {
        const named = (e.params as { additionalProperty?: string; missingProperty?: string }).additionalProperty ?? (e.params as { missingProperty?: string }).missingProperty;
        return `body${e.instancePath} ${e.message}${named === undefined ? '' : ` ('${named}')`}`;
      })
      .join('; ');
  };

  return {
    operations,
    problems(operationId, exchange) {
      const hit = operationFor(operations, exchange.method, exchange.url.pathname);
      if (hit?.operationId !== operationId) return [`${exchange.method} ${exchange.url.pathname} is ${hit?.operationId ?? 'no operation'}, not ${operationId}`];
      const documented = hit.responses.find((r) => r.status === String(exchange.status));
      if (!documented) return [`${operationId} documents ${hit.responses.map((r) => r.status).join(', ')}, not ${exchange.status}`];
      const problems: string[] = [];
      for (const name of documented.requiredHeaders) if (!exchange.headers.has(name)) problems.push(`header ${name} is required but missing`);
      for (const [name, schema] of Object.entries(documented.headers)) {
        const value = exchange.headers.get(name);
        const wrong = value === null ? undefined : validate(schema, headerValue(schema, value));
        if (wrong) problems.push(`header ${name}: ${wrong.replace(/\bbody\b/g, name)}`);
      }
      const types = Object.keys(documented.content);
      // A response documented without content (the redirects) must come without a body too.
      if (types.length === 0) {
        if (exchange.text !== '') problems.push(`the document describes no body, but ${exchange.text.length} characters came`);
        return problems;
      }
      if (!types.includes(exchange.contentType)) {
        problems.push(`content type "${exchange.contentType}" is not one of ${types.join(', ')}`);
        return problems;
      }
      const isJson = exchange.contentType.endsWith('json');
      if (isJson && exchange.json === undefined) problems.push('the body is not JSON');
      const wrong = validate(documented.content[exchange.contentType], isJson ? exchange.json : exchange.text);
      if (wrong) problems.push(`schema: ${wrong}`);
      return problems;
    },
  };
}
