// Handlers chosen by the operation that request validation found for a request (`req.openapi`, from the route table
// compiled from the document): the one routing decision a request gets, instead of a router matching its path again.
import type { Request, RequestHandler, Response } from 'express';
import type { operations } from '@tokenbell/sdk';
import { documentRouteOf, type RequestOperation } from './request-validation.js';

// On the request itself: a WeakMap entry per request cost an insertion and the collector's ephemeron work.
const dispatched = Symbol('dispatched route');
type DispatchedRequest = Request & { [dispatched]?: string };

/** The document's route of the operation whose handler took the request (for logs and metrics, as Express's route). */
export const dispatchedRoute = (req: Request): string | undefined => (req as DispatchedRequest)[dispatched];

/**
 * The route a request was answered by: the document's, for a handler chosen by its operation, else the Express route
 * that matched (pages, operations endpoints, test helpers); none for a request no route took. Metrics and the request
 * log name requests by it.
 */
export function routeOf(req: Request): string | undefined {
  return dispatchedRoute(req) ?? (req.route ? `${req.baseUrl}${String(req.route.path)}` : documentRouteOf(req.url));
}

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
