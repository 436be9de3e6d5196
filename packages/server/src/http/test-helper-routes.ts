// /api/v3/test_helpers: the area for apps' test suites (the document's `test_helpers` tag), mounted only when the
// instance runs with test helpers on. Requests reach here authenticated and validated; only administrators pass.
import { Router, type RequestHandler } from 'express';
import type { components } from '@tokenbell/sdk';
import { emitNotificationEvent, listNotificationMessages } from '../domain/notification-mail.js';
import { findProject } from '../domain/visibility.js';
import type { Storage } from '../store/storage.js';
import { principalOf, requireDocumentedScope } from './api-routes.js';
import { HttpError } from './errors.js';

type Schemas = components['schemas'];

/** Matches the area in any case, as Express routes (isServedApiPath's rule). */
export const testHelpersPath = /^\/api\/v3\/test_helpers(?:\/|$)/i;

/** With test helpers off the area does not exist: the API's plain 404, before validation could say otherwise. */
export const testHelpersOff: RequestHandler = (req, _res, next) => (testHelpersPath.test(req.path) ? next(new HttpError(404, '404 Not Found')) : next());

const requireAdmin: RequestHandler = (_req, res, next) => {
  if (!principalOf(res).user.is_admin) throw new HttpError(403, '403 Forbidden - test helpers are for administrators');
  next();
};

export interface TestHelperOptions {
  storage: Storage;
  /** The host name in Message-IDs and List-Ids. */
  mailHost: string;
  now: () => number;
  /** Called once an event's mail is queued, so delivery need not wait for its next poll. */
  onMailQueued?: () => void;
}

export function testHelperRouter({ storage, mailHost, now, onMailQueued }: TestHelperOptions): Router {
  const router = Router();
  router.use(requireDocumentedScope, requireAdmin);
  router.post('/projects/:id/notification_events', async (req, res) => {
    // Administrators see every project, as in the service.
    const project = await findProject(storage.namespaces, String(req.params.id));
    if (!project) throw new HttpError(404, '404 Project Not Found');
    // The domain's refusals (InputError) are answered 400 by the error handler, worded as the validator's.
    const result = await emitNotificationEvent(storage, project, req.body as Schemas['NotificationEventRequest'], { host: mailHost, now: now() });
    onMailQueued?.();
    res.status(201).json(result);
  });
  router.get('/notification_messages', async (req, res) => {
    const { username, event_id, per_page } = req.query as { username?: string; event_id?: string; per_page?: string };
    res.json(await listNotificationMessages(storage, { username, event_id, per_page: per_page === undefined ? undefined : Number(per_page) }));
  });
  return router;
}
