// The landing page.
import { Router } from 'express';
import { homePage } from '../../pages/home.js';
import { csrfToken } from '../session.js';
import { currentUser, html, type PagesOptions } from './shared.js';

export function homeRoutes({ store }: PagesOptions): Router {
  const router = Router();
  router.get('/', (req, res) => {
    const user = currentUser(store, req);
    html(res, 200, homePage(user, user ? csrfToken(req) : undefined));
  });
  return router;
}
