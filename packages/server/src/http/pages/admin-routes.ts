// The administrators' pages. To anyone else they do not exist (404), as the service answers for its admin area.
import { Router } from 'express';
import { listNotificationMessages } from '../../domain/notification-mail.js';
import { notificationMessagesPage } from '../../pages/notification-messages.js';
import { HttpError } from '../errors.js';
import { csrfToken } from '../session.js';
import { html, type PagesOptions, signedIn } from './shared.js';

/** The most messages the page shows: the newest, which are the ones someone looks for. */
const shown = 100;

export function adminRoutes({ storage }: PagesOptions): Router {
  const router = Router();
  router.get('/admin/notification_messages', async (req, res) => {
    const user = await signedIn(storage, req, res);
    if (!user) return;
    if (!user.is_admin) throw new HttpError(404, 'Page not found.');
    html(res, 200, notificationMessagesPage(user, csrfToken(req), await listNotificationMessages(storage, { per_page: shown })));
  });
  return router;
}
