// A tiny Express application with the test kit's middleware in front of a few plain routes, in the order the server
// mounts them (journal first, then faults, then the /api/v4 alias and the body parsers), for the HTTP tests of
// faults.ts and request-journal.ts without createApp's wiring.
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { ApiPrincipal } from '../../src/domain/api-authentication.js';
import { FaultQueue } from '../../src/domain/testing/faults.js';
import { RequestJournal } from '../../src/domain/testing/request-journal.js';
import { digest } from '../../src/domain/secrets.js';
import { apiV3Url } from '../../src/domain/api-paths.js';
import { faultInjection } from '../../src/http/faults.js';
import { requestJournal } from '../../src/http/request-journal.js';
import type { Storage } from '../../src/domain/storage/index.js';
import type { UserRecord } from '../../src/domain/storage/records.js';

export const instant = 1_800_000_000;
export const application = { id: 7, uid: 'app-7-uid' };
export const jane = { id: 3, username: 'jane' } as UserRecord;
/** The token the fake token endpoint issues, and the one API calls present. */
export const issuedToken = 'tba_issued-token-never-recorded';

export interface TestKitApp {
  baseUrl: string;
  journal: RequestJournal;
  faults: FaultQueue;
  /** How often the fault middleware parsed a body, and how often each route really answered. */
  counts: { parses: number; routes: number };
  /** Makes the storage's lookups throw. */
  breakStorage(): void;
  close(): Promise<void>;
}

export async function startTestKitApp(): Promise<TestKitApp> {
  const journal = new RequestJournal();
  const now = () => instant;
  const faults = new FaultQueue(now);
  const counts = { parses: 0, routes: 0 };
  let broken = false;
  const fail = () => {
    if (broken) throw new Error('the store is down');
  };
  // Only the two lookups the journal makes.
  const storage = {
    applications: { byId: async (id: number) => (fail(), id === application.id ? application : undefined) },
    tokens: { withUserByAccessDigest: async (d: string) => (fail(), d === digest(issuedToken) ? { user: jane } : undefined) },
  } as unknown as Storage;

  const json = express.json();
  const form = express.urlencoded({ extended: true });
  const parseBody: RequestHandler = (req, res, next) => {
    counts.parses++;
    json(req, res, (error?: unknown) => (error === undefined ? form(req, res, next) : next(error)));
  };

  const app = express();
  app.use(requestJournal(journal, now, storage));
  app.use(faultInjection(faults, parseBody));
  app.use((req, _res, next) => {
    req.url = apiV3Url(req.url);
    next();
  });
  app.use(json, form);
  app.use((_req, _res, next) => {
    counts.routes++;
    next();
  });
  // An API call authenticated with an OAuth token of the application, or a personal access token (PRIVATE-TOKEN).
  app.get('/api/v3/user', (req, res) => {
    const principal: ApiPrincipal = { user: jane, globalSetting: undefined, scopes: ['api'], via: 'bearerAuth', applicationId: req.get('private-token') ? null : application.id };
    res.locals.principal = principal;
    res.json({ username: jane.username });
  });
  app.get('/api/v3/slow', (_req, res) => {
    setTimeout(() => res.json({}), 2000).unref();
  });
  app.get('/api/v3/test_helpers/requests', (_req, res) => res.json(journal.list()));
  app.post('/oauth/token', (req, res) => {
    res.locals.issuedAccessDigest = digest(issuedToken);
    res.json({ access_token: issuedToken, token_type: 'Bearer', received: req.body as unknown });
  });
  app.post('/oauth/revoke', (_req, res) => res.json({}));
  app.get('/users/sign_in', (_req, res) => res.type('html').send('<p>sign in</p>'));
  app.use(((err, _req, res, _next) => {
    res.status((err as { status?: number }).status ?? 500).json({ message: 'failed' });
  }) as ErrorRequestHandler);

  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    journal,
    faults,
    counts,
    breakStorage: () => {
      broken = true;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

export const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

/** The journal's entries once the last request's has landed (it is recorded when its answer has been sent). */
export async function settled(journal: RequestJournal, count: number): Promise<ReturnType<RequestJournal['list']>> {
  for (let i = 0; i < 100 && journal.list({ per_page: 1000 }).length < count; i++) await new Promise((r) => setTimeout(r, 10));
  return journal.list({ per_page: 1000 });
}
