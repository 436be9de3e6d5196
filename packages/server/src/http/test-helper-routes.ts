// /api/v3/test_helpers: the area for apps' test suites (the document's `test_helpers` tag), mounted only when the
// instance runs with test helpers on. Requests reach here authenticated and validated; only administrators pass.
// Each route hands its body or query to the kit's operation (domain/testing/helpers.ts); the domain's refusals
// (InputError) are answered 400 by the error handler, worded as the validator's.
import { Router, type Request, type RequestHandler, type Response } from 'express';
import { InputError } from '../explained-error.js';
import { testHelpers, type TestHelperOptions } from '../domain/testing/helpers.js';
import { principalOf, requireDocumentedScope } from './api-routes.js';
import { HttpError } from './errors.js';

const requireAdmin: RequestHandler = (_req, res, next) => {
  if (!principalOf(res).user.is_admin) throw new HttpError(403, '403 Forbidden - test helpers are for administrators');
  next();
};

/** Query parameters arrive as strings; the validator has checked that this one is an integer. */
function withPerPage<T extends { per_page?: number }>(req: Request): T {
  const query = { ...req.query } as Record<string, unknown>;
  if (query.per_page !== undefined) query.per_page = Number(query.per_page);
  return query as T;
}

/** The project is the path's, so not knowing it is the path's 404, as for every other project route. */
export function asPathRefusal(error: unknown): never {
  if (error instanceof InputError && error.field === 'project' && error.code === 'unknown') throw new HttpError(404, '404 Project Not Found');
  throw error;
}

export function testHelperRouter(options: TestHelperOptions): Router {
  const helpers = testHelpers(options);
  const router = Router();
  /** Answers the operation's result with `status`, or 204 when it has none. */
  const answer = (status: number, run: (req: Request) => unknown) => async (req: Request, res: Response) => {
    const result = await run(req);
    if (result === undefined) res.status(204).end();
    else res.status(status).json(result);
  };
  router.use(requireDocumentedScope, requireAdmin);

  router.post('/users', answer(201, (req) => helpers.createUser(req.body)));
  router.post('/groups', answer(201, (req) => helpers.createGroup(req.body)));
  router.post('/projects', answer(201, (req) => helpers.createProject(req.body)));
  router.put('/memberships', answer(200, (req) => helpers.setMembership(req.body)));
  router.post('/applications', answer(201, (req) => helpers.createApplication(req.body)));
  router.post('/oauth_tokens', answer(201, (req) => helpers.mintAccessToken(req.body)));
  router.post('/personal_access_tokens', answer(201, (req) => helpers.mintPersonalAccessToken(req.body)));
  router.post('/authorizations', answer(201, (req) => helpers.authorize(req.body)));
  router.post('/device_authorizations', answer(201, (req) => helpers.decideDeviceAuthorization(req.body)));
  router.get('/auto_approval', answer(200, () => helpers.autoApproval()));
  router.put('/auto_approval', answer(200, (req) => helpers.setAutoApproval((req.body as { username: string | null }).username)));
  router.get('/clock', answer(200, () => helpers.clock()));
  router.post('/clock', answer(200, (req) => helpers.advanceClock((req.body as { seconds: number }).seconds)));
  router.post('/reset', answer(204, () => helpers.reset()));
  router.get('/requests', answer(200, (req) => helpers.requests(withPerPage(req))));
  router.delete('/requests', answer(204, () => helpers.clearRequests()));
  router.get('/faults', answer(200, () => helpers.faults()));
  router.post('/faults', answer(201, (req) => helpers.queueFault(req.body)));
  router.delete('/faults', answer(204, () => helpers.clearFaults()));
  router.post(
    '/projects/:id/notification_events',
    answer(201, (req) => helpers.emitNotificationEvent(String(req.params.id), req.body).catch(asPathRefusal)),
  );
  router.get('/notification_messages', answer(200, (req) => helpers.notificationMessages(withPerPage(req))));
  return router;
}
