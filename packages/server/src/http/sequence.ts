// Handlers run in turn, as Express runs a router's, without a router: for a branch whose every request passes every
// step, where a router would only add a path match and its dispatch machinery per step and request.
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** One handler that runs these in order: a step's error (thrown, rejected or passed to next) skips the rest. */
export function sequence(handlers: RequestHandler[]): RequestHandler {
  return function sequenced(req: Request, res: Response, done: NextFunction) {
    runInTurn(handlers, req, res, done);
  };
}

export function runInTurn(handlers: RequestHandler[], req: Request, res: Response, done: NextFunction): void {
  let i = 0;
  const step = (error?: unknown): void => {
    if (error !== undefined || i === handlers.length) return done(error as Parameters<NextFunction>[0]);
    const handler = handlers[i++]!;
    try {
      const result = handler(req, res, step) as unknown;
      if (result instanceof Promise) result.catch(step);
    } catch (thrown) {
      step(thrown);
    }
  };
  step();
}
