// The test kit's helpers called in the test's own process keep the contract they have over HTTP: their input is
// checked against the document's schemas for the operation, as the validator checks a request, and a refusal is
// thrown as the SDK's client of the area throws it (TokenbellValidationError, TokenbellNotFoundError, ...), with the
// status and message the HTTP answer carries. A suite moves between the two without changing a line, and a test that
// passes in-process does not fail over HTTP for input the document refuses.
import { TokenbellApiError } from '@tokenbell/sdk';
import type { TestHelpers } from '../domain/testing/helpers.js';
import { findTestHelperOperation, type TestHelperOperation } from '../openapi/test-helper-operations.js';
import { apiErrorAnswer } from './errors.js';
import { operationRefusal } from './request-validation.js';
import { asPathRefusal } from './test-helper-routes.js';

/**
 * Where a helper's arguments go in its request: its one argument is the body or the query, as the operation has one,
 * except for the three whose arguments the SDK spreads (advanceClock's seconds, setAutoApproval's username, and
 * emitNotificationEvent's project in the path).
 */
function requestOf(op: TestHelperOperation, args: unknown[]): { query?: Record<string, unknown>; params?: Record<string, string>; body?: unknown } {
  if (op.helper === 'advanceClock') return { body: { seconds: args[0] } };
  if (op.helper === 'setAutoApproval') return { body: { username: args[0] } };
  if (op.helper === 'emitNotificationEvent') return { params: { [op.pathParams[0]!.name]: String(args[0]) }, body: args[1] };
  if (op.body) return { body: args[0] };
  return op.queryParams.length > 0 ? { query: (args[0] ?? {}) as Record<string, unknown> } : {};
}

/** The refusal as the HTTP client would have thrown it; a failure of the server's own is left as it is, to be read. */
function asClientError(error: unknown): unknown {
  const { status, message } = apiErrorAnswer(error);
  if (status >= 500) return error;
  const body = { message };
  return TokenbellApiError.from(new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } }), body);
}

export function inProcessHelpers(helpers: TestHelpers): TestHelpers {
  const checked = Object.entries(helpers).map(([name, run]) => {
    const op = findTestHelperOperation(name);
    if (!op) throw new Error(`the document has no test-helper operation named ${name} (x-helper)`);
    const refusal = op.helper === 'emitNotificationEvent' ? asPathRefusal : (error: unknown): never => {
      throw error;
    };
    return [
      name,
      async (...args: unknown[]) => {
        try {
          // A copy: the check adds the document's defaults, which belong to this call, not to the caller's object.
          const request = structuredClone(requestOf(op, args));
          const problem = operationRefusal(op.method, op.path, request);
          if (problem) throw problem;
          return await (run as (...a: unknown[]) => Promise<unknown>)(...args).catch(refusal);
        } catch (error) {
          throw asClientError(error);
        }
      },
    ];
  });
  return Object.fromEntries(checked) as TestHelpers;
}
