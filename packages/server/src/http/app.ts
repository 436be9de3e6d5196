// The reference server's Express application: parsing, validation against the document, routes, one error handler.
import express, { type Request, type RequestHandler } from 'express';
import { type Config, defaultOf, limits } from '../config.js';
import { actAs, authenticateApiRequest } from '../domain/api-authentication.js';
import { LoginThrottle } from '../domain/login-throttle.js';
import { grantRegistry, type GrantRegistry } from '../domain/oauth/grants.js';
import type { MailDelivery } from '../domain/mail-delivery.js';
import type { Backend } from '../store/backend.js';
import type { Storage } from '../domain/storage/index.js';
import type { TestKit } from '../domain/testing/test-kit.js';
import type { TestHelperArea } from './test-helper-area.js';
import type { TestHelperOptions } from '../domain/testing/helpers.js';
import { lazyRouter } from './lazy-router.js';
import { apiDispatch, insufficientScope } from './api-routes.js';
import { sequence } from './sequence.js';
import { apiV3Url } from '../domain/api-paths.js';
import { areaOf, isServedApiPath, oauthEndpointOf, testHelpersPath } from './areas.js';
import { type ErrorLog, HttpError, errorHandler, lastResortHandler } from './errors.js';
import type { Viewer } from '../pages/html.js';
import { oauthDispatch } from './oauth-routes.js';
import { requestValidation, routingSettings } from './validation.js';
import { queryOnce } from './request-validation.js';
import { pageAssets, pageHeaders, pagePaths, pagesArea } from './pages-routes.js';
import { documentRouter } from './document-routes.js';
import { answerJsonExactly } from './json-answers.js';
import { answersAnyOrigin, crossOrigin } from './cors.js';
import { referenceRouter } from './reference-routes.js';
import { Metrics, operationsRouter } from './operations.js';
import type { SessionBacking } from './session.js';

export interface AppOptions {
  /** Where state lives (store/backend.ts): the data file's, or a database's shared by every instance on it. */
  backend: Backend;
  config: Pick<Config, 'baseUrl' | 'tokenTtl' | 'codeTtl' | 'validateResponses' | 'bodyLimit' | 'secureCookies'> &
    Partial<Pick<Config, 'trustProxy' | 'introspectionClients' | 'passwordGrant' | 'sessionLifetime' | 'monitoringAllowlist' | 'testHelpers' | 'idTokenTtl' | 'gitlabVersion'>>;
  /** The mail delivery worker, told when mail was queued; without one, mail waits for whoever delivers it. */
  mailDelivery?: Pick<MailDelivery, 'kick' | 'observeAttempts'>;
  /** Request logs (requestLogger in operations.ts); none when absent, as in most tests. */
  requestLog?: RequestHandler;
  /** The clock, in seconds since the epoch; tests move it to expire codes and tokens. With a test kit, the kit's. */
  now?: () => number;
  /**
   * With test helpers on (`config.testHelpers`), required: the kit their area works on (`new TestKit(storage)`, from
   * domain/testing/test-kit.ts), whose `markSeeded()` marks the state a reset goes back to. The area's modules load at
   * the instance's first request, so a server without test helpers never loads them.
   */
  testKit?: TestKit;
  log?: ErrorLog;
  /** Password-check throttling shared by sign-in and the password grant; tests pass one with their own policy. */
  throttle?: LoginThrottle;
  /**
   * The request validation (`requestValidation`), when the caller shares one between apps or has warmed up the
   * validator's (`warmUpValidation`, with --validate-responses), as the CLI does before listening; made here otherwise.
   */
  validation?: RequestHandler[];
  /** Aborted when the server begins to stop: readiness answers 503 from then on. */
  stopping?: AbortSignal;
}

const wallClock = () => Math.floor(Date.now() / 1000);

/**
 * HEAD is answered wherever GET is (RFC 9110 section 9.3.2), by the GET's route and checks: the document declares GETs
 * only, and the validator would refuse a HEAD with 405. Node leaves out the body of a HEAD request's answer whatever
 * the handler writes, as it decided when the request came in; the observers before this noted the method as sent.
 */
const headAsGet: RequestHandler = (req, _res, next) => {
  if (req.method === 'HEAD') req.method = 'GET';
  next();
};

/** Clients written for the newer API path work unchanged: /api/v4/... is answered as /api/v3/... */
const apiV4Alias: RequestHandler = (req, _res, next) => {
  req.url = apiV3Url(req.url);
  next();
};

function apiAuthentication(storage: Storage, now: () => number): RequestHandler {
  return async (req, res, next) => {
    const result = await authenticateApiRequest(
      storage,
      {
        accessTokenQuery: queryOnce(req).access_token,
        authorization: req.headers.authorization,
        privateToken: req.get('private-token'),
      },
      now(),
    );
    if (!result.ok) {
      const challenge = result.reason === 'invalid' ? 'Bearer realm="tokenbell", error="invalid_token"' : 'Bearer realm="tokenbell"';
      throw new HttpError(401, '401 Unauthorized', { 'WWW-Authenticate': challenge });
    }
    const sudo = req.get('sudo') ?? queryOnce(req).sudo;
    const principal = await actAs(storage, result.principal, typeof sudo === 'string' ? sudo : undefined);
    if ('insufficientScope' in principal) throw insufficientScope(principal.insufficientScope);
    if ('status' in principal) throw new HttpError(principal.status, principal.message);
    res.locals.principal = principal;
    next();
  };
}

/** With test helpers off the area does not exist: the API's plain 404, before validation could say otherwise. */
const testHelpersOff: RequestHandler = (req, _res, next) => (testHelpersPath.test(req.path) ? next(new HttpError(404, '404 Not Found')) : next());

/** The test-helper area's steps, from one module loaded at the instance's first request (test-helper-area.ts). */
function testHelperArea(helpers: TestHelperOptions, now: () => number, bodies: RequestHandler): TestHelperArea {
  let area: Promise<TestHelperArea> | undefined;
  const load = () => (area ??= import('./test-helper-area.js').then((module) => module.testHelperArea(helpers, now, bodies)));
  return {
    journal: lazyRouter(async () => (await load()).journal),
    faults: lazyRouter(async () => (await load()).faults),
    routes: lazyRouter(async () => (await load()).routes),
  };
}

/**
 * JSON and form bodies, parsed only when the request has one (RFC 9112 section 6.3, as body-parser decides): for a
 * request without a body both parsers would only pass it on, at the cost of two layers on every GET.
 */
function bodyParsers(limit: string): RequestHandler {
  const json = express.json({ limit });
  const form = express.urlencoded({ extended: true, limit, parameterLimit: 200 });
  const hasBody = (req: Request) => req.headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(req.headers['content-length']));
  return (req, res, next) => {
    if (!hasBody(req)) {
      // A request with neither length nor chunks has a body of length zero (RFC 9112 section 6.3), which a client
      // sending a Content-Type meant as an empty form: read as one, as with Content-Length: 0, rather than left unset
      // for the validator and the handlers to trip on (a 500).
      if (req.headers['content-type'] !== undefined) req.body = {};
      return next();
    }
    json(req, res, (error?: unknown) => (error === undefined ? form(req, res, next) : next(error)));
  };
}

/** What the steps below share, made once per app. */
interface AppParts {
  storage: Storage;
  config: AppOptions['config'];
  kit: TestKit | undefined;
  /** With a kit: the test-helper area's steps, loaded at the first request. */
  helperArea: TestHelperArea | undefined;
  now: () => number;
  throttle: LoginThrottle;
  sessions: SessionBacking;
  metrics: Metrics;
  bodies: RequestHandler;
  validation: RequestHandler[];
  grants: GrantRegistry;
  /** How id_tokens are made and claims released, but for the issuer (the base URL). */
  openId: { idTokenTtl: number; instanceSecret: string };
}

export function createApp(options: AppOptions): express.Express {
  const parts = appParts(options);
  const app = express();
  applySettings(app, parts.config);
  // What every request passes before the areas part, in turn in one step of the app's router rather than a step each.
  const front = [...observers(parts, options.requestLog), headAsGet, apiV4Alias];
  if (parts.helperArea) front.push(parts.helperArea.faults);
  app.use(sequence([...front, areaBranches(apiBranch(parts), oauthBranch(parts))]));
  usePageHeadersAndCommonRoutes(app, parts, options.stopping);
  const viewer = usePages(app, parts);
  app.use(errorHandler(options.log, parts.grants, parts.metrics, viewer));
  app.use(lastResortHandler(options.log));
  return app;
}

function appParts({ backend, config, now: givenNow = wallClock, throttle: givenThrottle, validation, testKit, mailDelivery }: AppOptions): AppParts {
  const { storage } = backend;
  if (config.testHelpers && !testKit) throw new Error('createApp: config.testHelpers needs options.testKit (new TestKit(storage), then markSeeded() once the store is seeded)');
  const kit = config.testHelpers ? testKit : undefined;
  const now = kit ? kit.clock.now : givenNow;
  const throttle = givenThrottle ?? new LoginThrottle(limits.loginThrottle, backend.throttleBacking, () => now() * 1000);
  kit?.attachThrottle(throttle, limits.loginThrottle);
  const bodies = bodyParsers(config.bodyLimit);
  const openId = { idTokenTtl: config.idTokenTtl ?? Number(defaultOf('id-token-ttl')), instanceSecret: backend.sessionSecret };
  return {
    storage,
    config,
    kit,
    helperArea: kit ? testHelperArea({ storage, kit, baseUrl: config.baseUrl, codeTtl: config.codeTtl, tokenTtl: config.tokenTtl, openId, onMailQueued: () => mailDelivery?.kick() }, now, bodies) : undefined,
    now,
    throttle,
    sessions: { storage: storage.sessions, secret: backend.sessionSecret },
    // The clock the CLI gives the delivery worker too (the kit's with test helpers on).
    metrics: new Metrics({ maintenance: storage.maintenance, mail: storage.mail, now, testHelpers: kit !== undefined, ...(mailDelivery ? { mailDelivery } : {}) }),
    bodies,
    // One validator for the branches and the pages: its compiled schemas and route table are shared.
    validation: validation ?? requestValidation({ validateResponses: config.validateResponses }),
    grants: grantRegistry(config.passwordGrant),
    // The session secret is the instance's one secret (every instance on a database shares it); sub_legacy derives from it.
    openId,
  };
}

function observers({ helperArea, metrics }: AppParts, requestLog: RequestHandler | undefined): RequestHandler[] {
  const steps: RequestHandler[] = [];
  if (requestLog) steps.push(requestLog);
  // First, so that it records the path the client called and every answer, a queued fault's included.
  if (helperArea) steps.push(helperArea.journal);
  steps.push(metrics.observeRequests);
  return steps;
}

function applySettings(app: express.Express, config: AppOptions['config']): void {
  app.disable('x-powered-by');
  answerJsonExactly(app);
  for (const [setting, value] of Object.entries(routingSettings)) app.set(setting, value);
  // req.ip (the sign-in throttle's key) and req.secure (the session cookie's Secure flag) follow it.
  app.set('trust proxy', config.trustProxy ?? false);
}

/**
 * The API, the hot path, is its own branch: its requests pass only the steps that apply to them, not the page
 * headers, sessions, and the OAuth and page routes that each cost a match per request. Every step applies to every
 * API request, so they run in turn without a router (sequence.ts), and the handler is the one the validation's
 * compiled route table chose (apiDispatch). The validator sees the whole path; authentication needs no mount.
 */
function apiBranch({ storage, config, helperArea, now, bodies, validation }: AppParts): RequestHandler {
  // Authentication comes before validation, so an anonymous caller learns nothing about parameters (401 first).
  const steps: RequestHandler[] = [bodies, apiAuthentication(storage, now)];
  if (!config.testHelpers) steps.push(testHelpersOff);
  steps.push(...validation, apiDispatch(storage, config.baseUrl, config.gitlabVersion ?? defaultOf('gitlab-version')));
  if (helperArea) steps.push(helperArea.routes);
  return sequence(steps);
}

/**
 * The OAuth JSON endpoints are a branch too, for the same reason: none of the page, document and operations layers
 * below applies to their paths. A request the branch leaves unanswered goes on down the app as before.
 */
function oauthBranch({ storage, config, kit, now, throttle, bodies, validation, grants, metrics, openId }: AppParts): RequestHandler {
  const autoApproval = () => kit?.autoApproval ?? null;
  const dispatch = oauthDispatch({ storage, baseUrl: config.baseUrl, tokenTtl: config.tokenTtl, now, throttle, introspectionClients: config.introspectionClients ?? [], grants, metrics, openId, autoApproval });
  return sequence([bodies, ...validation, dispatch]);
}

/** Sends an API or OAuth request down its branch, with the headers and CORS its area answers with; pages go on. */
function areaBranches(api: RequestHandler, oauth: RequestHandler): RequestHandler {
  return (req, res, next) => {
    const path = req.path;
    const area = areaOf(path);
    if (area === 'pages') return next();
    // Set before anything can answer, so errors carry them too. No JSON answer may be sniffed as something else,
    // and none is cached except the server metadata and the JWK set (whose route says for how long): API answers hold
    // a user's data and their requests may carry the token in the query string (RFC 6750 section 5.3); OAuth answers
    // hold tokens (RFC 6749 section 5.1).
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (area !== 'oauth' || oauthEndpointOf(path) !== 'metadata') res.setHeader('Cache-Control', 'no-store');
    const branch = area === 'oauth' ? oauth : area === 'api' && isServedApiPath(path) ? api : undefined;
    const dispatch = () => (branch ? branch(req, res, next) : next());
    // Before the branches, so that a preflight is answered here and every answer, errors included, has the headers.
    return answersAnyOrigin(area, path) ? crossOrigin(req, res, dispatch) : dispatch();
  };
}

function usePageHeadersAndCommonRoutes(app: express.Express, { config, storage, metrics, bodies }: AppParts, stopping: AbortSignal | undefined): void {
  app.use(pagePaths, pageHeaders(config.secureCookies));
  // The landing page and the document answer errors as pages too, with the pages' headers.
  app.use(['/openapi.yaml', '/openapi.json'], pageHeaders(config.secureCookies));
  app.all('/', pageHeaders(config.secureCookies));
  app.use(pageAssets());
  app.use(bodies);
  // After the body parsers, so that an oversized body is refused here as everywhere else.
  app.use(operationsRouter({ maintenance: storage.maintenance, metrics, allowlist: config.monitoringAllowlist ?? ['loopback'], stopping, testHelpers: config.testHelpers === true }), documentRouter(), referenceRouter(config.baseUrl));
}

/** Mounts the pages and their session layer, which load at the first request that reaches them; returns who is signed in. */
function usePages(app: express.Express, { storage, config, kit, now, throttle, sessions, validation }: AppParts): (req: Request) => Promise<Viewer> {
  const area = pagesArea({
    storage,
    now,
    codeTtl: config.codeTtl,
    secureCookies: config.secureCookies,
    throttle,
    sessionLifetimes: { idleSeconds: limits.sessionIdleSeconds, lifetimeSeconds: config.sessionLifetime ?? Number(defaultOf('session-lifetime')) },
    sessions,
    autoApproval: () => kit?.autoApproval ?? null,
    baseUrl: config.baseUrl,
  });
  // Sessions and CSRF only on the pages, and before validation: a forged form gets 403 whatever its fields.
  app.use(area.sessions);
  app.use(validation);
  app.use(area.pages);
  return area.viewer;
}
