// The document's request schemas as checks for callers that do not come over HTTP (the test kit's in-process
// helpers). The same ajv, dialect, options and formats as the validator (express-openapi-validator's request
// options), and its problems in the validator's shape (`/body/seconds`), so that the error handler words a refusal
// the same whichever way it came (describeValidationProblem).
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { document } from './document.js';

const ajv = new Ajv2020({ strict: false, strictNumbers: true, strictTuples: true, allowUnionTypes: false, validateSchema: false, useDefaults: true, allErrors: false });
addFormats.default(ajv, { mode: 'fast' });
// The schemas refer into the document (`#/components/schemas/...`): it is added once, whole, and each check is a
// reference into it, so nothing is copied.
ajv.addSchema({ ...document, $id: 'tokenbell' }, undefined, undefined, false);

/** A schema of the document, its references (`#/components/...`) pointed at the document added above. */
const inDocument = (schema: unknown): object => JSON.parse(JSON.stringify(schema ?? {}).replaceAll('"$ref":"#/', '"$ref":"tokenbell#/')) as object;

/** What the validator answers for a refused request: status 400 and its first problem, located as it locates them. */
export interface RequestProblem {
  status: 400;
  errors: Array<{ path: string; message: string }>;
}

const compiled = new Map<string, ValidateFunction>();
function checkOf(key: string, schema: () => object): ValidateFunction {
  let check = compiled.get(key);
  if (!check) compiled.set(key, (check = ajv.compile(schema())));
  return check;
}

/** As express-openapi-validator places a problem: at the missing or extra property, else where the value is. */
function problemOf(where: 'body' | 'query', error: ErrorObject): RequestProblem {
  const params = error.params as { missingProperty?: string; additionalProperty?: string; unevaluatedProperty?: string };
  const named = params.missingProperty ?? params.additionalProperty ?? params.unevaluatedProperty;
  // The validator lists an enum's values after its message.
  const allowed = error.keyword === 'enum' ? (error.params as { allowedValues?: unknown[] }).allowedValues : undefined;
  const message = `${error.message ?? 'is not valid'}${allowed ? `: ${allowed.join(', ')}` : ''}`;
  return { status: 400, errors: [{ path: `/${where}${error.instancePath}${named === undefined ? '' : `/${named}`}`, message }] };
}

/**
 * Checks a request to the operation at `method path`, its query and its JSON body, as the validator would; answers
 * its problem, or null. The body may gain the defaults the document gives, as the validator's does.
 */
export function requestProblem(
  operation: { operationId: string; queryParams: Array<{ name: string; required?: boolean; schema?: unknown }>; body: { required: boolean; schema: unknown } | null },
  request: { query?: Record<string, unknown>; body?: unknown },
): RequestProblem | null {
  const { operationId, queryParams, body } = operation;
  if (queryParams.length > 0 && request.query !== undefined) {
    const check = checkOf(`${operationId} query`, () => ({
      type: 'object',
      properties: Object.fromEntries(queryParams.map((p) => [p.name, inDocument(p.schema)])),
      required: queryParams.filter((p) => p.required).map((p) => p.name),
    }));
    if (!check(request.query)) return problemOf('query', check.errors![0]!);
  }
  if (body && (request.body !== undefined || body.required)) {
    const check = checkOf(`${operationId} body`, () => inDocument(body.schema));
    if (!check(request.body)) return problemOf('body', check.errors![0]!);
  }
  return null;
}
