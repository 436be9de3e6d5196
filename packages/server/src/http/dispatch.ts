// Handlers chosen by the operation that request validation found for a request (`req.openapi`, from the route table
// compiled from the document): the one routing decision a request gets, instead of a router matching its path again.
import type { Request, RequestHandler, Response } from 'express';
import type { operations } from '@tokenbell/sdk';
import type { RequestOperation } from './request-validation.js';

// On the request itself: a WeakMap entry per request cost an insertion and the collector's ephemeron work.
const dispatched = Symbol('dispatched route');
type DispatchedRequest = Request & { [dispatched]?: string };

/** The document's route of the operation whose handler took the request (for logs and metrics, as Express's route). */
export const dispatchedRoute = (req: Request): string | undefined => (req as DispatchedRequest)[dispatched];

export type OperationHandler = (req: Request, res: Response) => void | Promise<void>;

/** Handlers by the document's operationId: a name the document lacks does not compile. */
export type OperationHandlers = { [id in keyof operations]?: OperationHandler };

/** The operation's handler, after `before` (a check every handler here needs); another operation's request goes on. */
export function dispatchByOperation(handlers: OperationHandlers, before?: (req: Request, res: Response) => void): RequestHandler {
  const byId = handlers as Record<string, OperationHandler | undefined>;
  return (req, res, next) => {
    const openapi = (req as { openapi?: RequestOperation }).openapi;
    const operationId = openapi?.schema.operationId as string | undefined;
    const handler = operationId === undefined ? undefined : byId[operationId];
    if (!handler) return next();
    (req as DispatchedRequest)[dispatched] = openapi!.expressRoute;
    before?.(req, res);
    return handler(req, res);
  };
}
