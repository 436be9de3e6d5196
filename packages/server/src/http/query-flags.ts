// The service's API reads a yes-or-no query parameter as its framework (Grape) does: `true`, `1`, `yes`, ... in any
// case, and python-gitlab sends Python's `True`. The document's QueryFlag states the spellings, and which parameters
// take one; they are read from it here once, so that a handler sees booleans.
import { document } from '../openapi/document.js';

const flagSchema = '#/components/schemas/QueryFlag';
const yes = /^(?:true|t|1|y|yes|on)$/i;

interface Parameter {
  name: string;
  in: string;
  schema?: { $ref?: string };
}
const resolve = (p: Parameter | { $ref: string }): Parameter =>
  '$ref' in p ? document.components.parameters[p.$ref.slice('#/components/parameters/'.length)] : p;

/** Each operation's query parameters that are QueryFlags, by operationId. */
const flagsOf = new Map<string, string[]>();
for (const item of Object.values<Record<string, unknown>>(document.paths)) {
  for (const operation of Object.values(item) as { operationId?: string; parameters?: Parameter[] }[]) {
    if (!operation?.operationId) continue;
    const flags = (operation.parameters ?? []).map(resolve).filter((p) => p.in === 'query' && p.schema?.$ref === flagSchema);
    if (flags.length > 0) flagsOf.set(operation.operationId, flags.map((p) => p.name));
  }
}

/** The request's query with the operation's QueryFlag parameters as booleans (validation has checked their spelling). */
export function queryWithFlags<T>(operationId: string, query: Record<string, unknown>): T {
  const converted = { ...query };
  for (const name of flagsOf.get(operationId) ?? []) {
    if (typeof converted[name] === 'string') converted[name] = yes.test(converted[name]);
  }
  return converted as T;
}
