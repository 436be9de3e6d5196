// The operations of a dereferenced OpenAPI document with their documented responses: what the contract suite
// checks answers against and what scripts/contract-coverage.ts counts.

type Json = Record<string, unknown>;

const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

export interface DocumentedResponse {
  status: string;
  /** Media type → schema; empty for responses without a body (redirects). */
  content: Record<string, unknown>;
  /** Header name (lower case) → schema. */
  headers: Record<string, unknown>;
  /** The headers (lower case) the answer must carry. */
  requiredHeaders: string[];
}

export interface DocumentedOperation {
  operationId: string;
  method: string;
  path: string;
  responses: DocumentedResponse[];
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export function listOperations(doc: Json): DocumentedOperation[] {
  const operations: DocumentedOperation[] = [];
  for (const [path, item] of Object.entries(isObject(doc.paths) ? doc.paths : {})) {
    if (!isObject(item)) continue;
    for (const method of methods) {
      const op = item[method];
      if (!isObject(op)) continue;
      if (typeof op.operationId !== 'string') throw new Error(`${method.toUpperCase()} ${path} has no operationId`);
      const responses = Object.entries(isObject(op.responses) ? op.responses : {}).map(([status, r]): DocumentedResponse => {
        const response = isObject(r) ? r : {};
        const content = Object.fromEntries(
          Object.entries(isObject(response.content) ? response.content : {}).map(([type, media]) => [type, isObject(media) ? media.schema : undefined]),
        );
        const headers = Object.fromEntries(
          Object.entries(isObject(response.headers) ? response.headers : {}).map(([name, h]) => [name.toLowerCase(), isObject(h) ? h.schema : undefined]),
        );
        const requiredHeaders = Object.entries(isObject(response.headers) ? response.headers : {})
          .filter(([, h]) => isObject(h) && h.required === true)
          .map(([name]) => name.toLowerCase());
        return { status, content, headers, requiredHeaders };
      });
      operations.push({ operationId: op.operationId, method: method.toUpperCase(), path, responses });
    }
  }
  return operations;
}

/**
 * The operation a request hit, by method and path template (`{id}` matches one percent-encoded segment). A concrete
 * path wins over a templated one that also matches (OpenAPI 3.1, Paths Object), so the fewest templates win.
 */
export function operationFor(operations: DocumentedOperation[], method: string, pathname: string): DocumentedOperation | undefined {
  const templates = (op: DocumentedOperation) => (op.path.match(/\{/g) ?? []).length;
  return operations
    .filter((op) => {
      if (op.method !== method.toUpperCase()) return false;
      const pattern = op.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
      return new RegExp(`^${pattern}$`).test(pathname);
    })
    .sort((a, b) => templates(a) - templates(b))[0];
}
