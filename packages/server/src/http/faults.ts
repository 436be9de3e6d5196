// Queued faults (the test-helper area's queueFault): the next matching request gets the queued answer instead of its
// real one, or its real one late. Runs before the API, OAuth and page branches, so a fault can stand in for any of
// them; domain/testing/faults.ts decides which fault a request takes.
import type { Request, RequestHandler, Response } from 'express';
import { STATUS_CODES } from 'node:http';
import type { components } from '@tokenbell/sdk';
import { basicChallenge, basicClientId } from '../domain/oauth/client-authentication.js';
import type { FaultAnswer, FaultErrorCode, FaultQueue, RequestFacts } from '../domain/testing/faults.js';
import { apiV3Url } from '../domain/api-paths.js';
import { errorFormatOf, oauthEndpointOf, testHelpersPath } from './areas.js';

type Schemas = components['schemas'];

const stringField = (source: unknown, name: string): string | undefined => {
  const value = (source as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * The client a request names: the user part of its HTTP Basic credentials, else a `client_id` in its body or query.
 * Not authenticated: this is what the request says, for matching faults and journal entries.
 */
export function presentedClientId(req: Request): string | undefined {
  return basicClientId(req.headers.authorization) ?? stringField(req.body, 'client_id') ?? stringField(req.query, 'client_id');
}

/** The `grant_type` a request to the token endpoint sends; nothing elsewhere. */
export function presentedGrantType(req: Request, path: string): string | undefined {
  return oauthEndpointOf(path) === 'token' ? stringField(req.body, 'grant_type') : undefined;
}

/** Whether a request is the test-helper area's own, which faults never answer and the journal never records. */
export const isTestHelperPath = (path: string): boolean => testHelpersPath.test(apiV3Url(path));

/** RFC 6749 section 5.2's code for a queued status given without one, as the document says. */
function defaultErrorCode(status: number): FaultErrorCode {
  if (status === 401) return 'invalid_client';
  return status >= 500 ? 'server_error' : 'invalid_request';
}

/**
 * Answers in the format of the request's area, as the error handler would: RFC 6749 JSON on the OAuth endpoints,
 * the API's `{"message"}` anywhere else (a fault is for an app's tests, and an app talks JSON to every path it calls).
 */
function answerFault(res: Response, path: string, answer: FaultAnswer): void {
  const status = answer.status ?? (answer.error === 'invalid_client' ? 401 : 400);
  // What the JSON areas set before anything answers (app.ts); this answer comes before them.
  res.status(status).set({ 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
  if (errorFormatOf(path) === 'oauth') {
    const error = answer.error ?? defaultErrorCode(status);
    if (status === 401 && error === 'invalid_client') res.set('WWW-Authenticate', basicChallenge);
    const body: Omit<Schemas['OAuthError'], 'error'> & { error: FaultErrorCode } = { error, ...(answer.message === undefined ? {} : { error_description: answer.message }) };
    res.set('Pragma', 'no-cache').json(body);
    return;
  }
  const body: Schemas['ApiError'] = { message: answer.message ?? `${status} ${STATUS_CODES[status] ?? 'Error'}` };
  res.json(body);
}

/**
 * Mount before the branches. `parseBody` is the app's body parsing; it runs here only when a queued fault matches on
 * what a body carries (grant_type, client_id), and body-parser marks the body parsed, so the later parsers skip it.
 */
export function faultInjection(faults: FaultQueue, parseBody: RequestHandler): RequestHandler {
  return (req, res, next) => {
    // The hot path when no test queued anything: one comparison.
    if (faults.size === 0) return next();
    const path = apiV3Url(req.path);
    if (testHelpersPath.test(path)) return next();

    const decide = () => {
      const facts: RequestFacts = { method: req.method, path, grantType: presentedGrantType(req, path), clientId: presentedClientId(req) };
      const fault = faults.take(facts);
      if (!fault) return next();
      // The journal (request-journal.ts) shows which fault the request met, a delay alone included.
      res.locals.faultId = fault.id;
      const answer = fault.answer;
      const respond = () => (answer.status === undefined && answer.error === undefined ? next() : answerFault(res, path, answer));
      if (!answer.delay_ms) return respond();
      // A client that gave up waiting gets nothing more: its request is not run late, after it stopped caring.
      const gone = () => clearTimeout(timer);
      const timer = setTimeout(() => {
        res.off('close', gone);
        if (!res.destroyed) respond();
      }, answer.delay_ms);
      res.once('close', gone);
    };
    if (!faults.needsBody()) return decide();
    parseBody(req, res, (error?: unknown) => (error === undefined ? decide() : next(error)));
  };
}
