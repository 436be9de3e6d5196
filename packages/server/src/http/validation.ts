// Which request validation an app runs: the document's checks compiled at build time (request-validation.ts), or,
// with --validate-responses, express-openapi-validator's whole chain (openapi-validation.ts), which also checks every
// answer against the document. The validator is loaded only then: a server that does not check its answers never
// loads it, and so never compiles the document at start.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ValidationOptions } from './openapi-validation.js';
import { compiledRequestValidation } from './request-validation.js';
import { runInTurn } from './sequence.js';

/**
 * The app's settings that decide how paths and queries are read, which the validator's route table and the compiled
 * one must share with it. The query parser must be `extended`, as the document's deep-object parameters need.
 */
export const routingSettings = {
  'case sensitive routing': false,
  'strict routing': false,
  'query parser': 'extended',
} as const;

/** The validation middleware for the setting; the validator's chain is loaded on the first request that needs it. */
export function requestValidation({ validateResponses }: ValidationOptions): RequestHandler[] {
  if (!validateResponses) return [compiledRequestValidation()];
  let chain: RequestHandler[] | undefined;
  const loading = import('./openapi-validation.js').then(({ openApiValidation }) => (chain = openApiValidation({ validateResponses: true })));
  // Marked handled here; a failure to load reaches the first request's error handler below.
  loading.catch(() => undefined);
  return [
    function validatorOnFirstUse(req: Request, res: Response, next: NextFunction) {
      if (chain) return runInTurn(chain, req, res, next);
      loading.then((loaded) => runInTurn(loaded, req, res, next), next);
    },
  ];
}

/**
 * The validator's chain with its checks of requests and answers compiled before listening (warmUpValidation), not on
 * the first requests, for a server started with --validate-responses.
 */
export async function warmedUpValidator({ testHelpers }: { testHelpers: boolean }): Promise<RequestHandler[]> {
  const { openApiValidation, warmUpValidation } = await import('./openapi-validation.js');
  const chain = openApiValidation({ validateResponses: true });
  await warmUpValidation(chain, { testHelpers });
  return chain;
}
