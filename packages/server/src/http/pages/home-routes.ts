// The landing page.
import { Router } from 'express';
import { homePage } from '../../pages/home.js';
import { csrfToken } from '../session.js';
import { currentUser, html, type PagesOptions } from './shared.js';

export function homeRoutes({ storage }: PagesOptions): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    const user = await currentUser(storage, req);
    html(res, 200, homePage(user, user ? csrfToken(req) : undefined));
  });
  return router;
}
