// The test-helper area's operations as the document states them (the `test_helpers` tag): name, operationId, method,
// path, parameters and body. The command (cli/test-helpers.ts) calls them by these, and the in-process helpers check
// their input against the same operations (http/in-process-helpers.ts), so a new operation in the document is one on
// every surface.
import { document } from './document.js';

export interface TestHelperOperation {
  operationId: string;
  /** The operation's one name (its `x-helper`): `advanceClock`, as the SDK and the in-process helpers call it. */
  helper: string;
  /** `advance-clock` for `advanceClock`: what a shell user types. */
  command: string;
  method: string;
  path: string;
  summary: string;
  pathParams: DocumentParameter[];
  queryParams: DocumentParameter[];
  /** Its JSON body: whether required, the document's example, and its schema (references into the document kept). */
  body: { required: boolean; example: unknown; schema: unknown } | null;
}

export interface DocumentParameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: unknown;
}

const kebab = (operationId: string) => operationId.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const resolve = (node: any): any => {
  if (typeof node?.$ref !== 'string') return node;
  // Only the document's own components are referenced (`#/components/...`).
  return resolve(node.$ref.slice(2).split('/').reduce((at: Record<string, unknown>, key: string) => at[key], document));
};

const httpMethods = ['get', 'put', 'post', 'delete', 'patch'];

/** The tag's operations in the document's order. */
export const testHelperOperations: readonly TestHelperOperation[] = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
  httpMethods.flatMap((method) => {
    const op = resolve(item[method]);
    if (!op?.tags?.includes('test_helpers')) return [];
    // Path-level parameters apply to each operation unless the operation names one again.
    const params = new Map<string, DocumentParameter>();
    for (const p of [...((item.parameters as unknown[]) ?? []), ...(op.parameters ?? [])].map(resolve) as DocumentParameter[]) params.set(`${p.in}:${p.name}`, p);
    const json = resolve(op.requestBody)?.content?.['application/json'];
    return [
      {
        operationId: op.operationId as string,
        helper: op['x-helper'] as string,
        command: kebab(op['x-helper']),
        method: method.toUpperCase(),
        path,
        summary: op.summary as string,
        pathParams: [...params.values()].filter((p) => p.in === 'path'),
        queryParams: [...params.values()].filter((p) => p.in === 'query'),
        body: json ? { required: resolve(op.requestBody).required === true, example: json.example, schema: json.schema } : null,
      },
    ];
  }),
);

/** By its name or its operationId, either in camelCase or kebab-case, in any case: every spelling of the document's. */
export function findTestHelperOperation(name: string): TestHelperOperation | undefined {
  const wanted = name.replace(/-/g, '').toLowerCase();
  return testHelperOperations.find((op) => op.helper.toLowerCase() === wanted || op.operationId.toLowerCase() === wanted);
}

