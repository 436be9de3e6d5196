// Records every request the instance answers (the test-helper area's own excepted) in the request journal, for an
// app's tests to assert on (listRecordedRequests). What is recorded is chosen field by field, so no token, secret,
// password, code or query string can reach the journal: the query is dropped whole, since it may carry
// access_token, code and state.
import type { Request, RequestHandler, Response } from 'express';
import { performance } from 'node:perf_hooks';
import type { ApiPrincipal } from '../domain/api-authentication.js';
import type { RecordedRequest, RequestJournal } from '../domain/testing/request-journal.js';
import type { Storage } from '../domain/storage/index.js';
import { apiV3Url } from '../domain/api-paths.js';
import { isTestHelperPath, presentedClientId, presentedGrantType } from './faults.js';

/**
 * The status recorded when the client went away before the answer was sent whole (nginx's "client closed request"):
 * no status reached it, and the one the server had set may be only the default 200.
 */
export const clientClosedStatus = 499;

const orNull = async <T>(lookup: () => Promise<T | undefined>): Promise<T | null> => {
  try {
    return (await lookup()) ?? null;
  } catch {
    return null;
  }
};

/** The application: the client the request named, else the one whose OAuth token authenticated an API call. */
async function clientIdOf(req: Request, principal: ApiPrincipal | undefined, storage: Storage): Promise<string | null> {
  const named = presentedClientId(req);
  if (named !== undefined) return named;
  const applicationId = principal?.applicationId ?? null;
  return applicationId === null ? null : orNull(async () => (await storage.applications.byId(applicationId))?.uid);
}

/** The user an API call acted for, or the one the token endpoint issued a token to (oauth-routes.ts notes which). */
async function usernameOf(res: Response, principal: ApiPrincipal | undefined, storage: Storage): Promise<string | null> {
  if (principal) return principal.user.username;
  const issued = res.locals.issuedAccessDigest as string | undefined;
  return issued === undefined ? null : orNull(async () => (await storage.tokens.withUserByAccessDigest(issued))?.user.username);
}

/**
 * Mount first, before the /api/v4 alias rewrites req.url, so the path is the one the app called. `now` is the
 * instance's clock in seconds since the epoch. Recording never fails a request: a lookup that fails leaves its field
 * null. The entry is recorded once its lookups answer, which on a store in this instance is before the client can
 * send its next request; on a shared database a client quick enough may ask for the journal a moment before.
 */
export function requestJournal(journal: RequestJournal, now: () => number, storage: Storage): RequestHandler {
  return (req, res, next) => {
    // The query is never recorded: it may carry access_token, code and state.
    const path = req.originalUrl.split('?', 1)[0]!;
    if (isTestHelperPath(path)) return next();
    const at = new Date(now() * 1000).toISOString();
    const started = performance.now();
    const { method } = req;

    const record = async (status: number) => {
      const duration_ms = Math.round((performance.now() - started) * 10) / 10;
      const principal = res.locals.principal as ApiPrincipal | undefined;
      const [client_id, username] = await Promise.all([clientIdOf(req, principal, storage), usernameOf(res, principal, storage)]);
      const entry: RecordedRequest = {
        at,
        method,
        path,
        status,
        duration_ms,
        client_id,
        username,
        grant_type: presentedGrantType(req, apiV3Url(path)) ?? null,
        fault: (res.locals.faultId as string | undefined) ?? null,
      };
      journal.record(entry);
    };
    const recordQuietly = (status: number) => record(status).catch(() => undefined);
    res.once('finish', () => void recordQuietly(res.statusCode));
    res.once('close', () => {
      if (!res.writableFinished) void recordQuietly(clientClosedStatus);
    });
    next();
  };
}
