// The demo application's redirect URI: a page that shows what the authorization endpoint sent.
import { Router } from 'express';
import { demoCallbackPage } from '../../pages/demo-callback.js';
import { demoCallbackPath } from '../../domain/seed/demo.js';
import { html, type PagesOptions, viewerOf } from './shared.js';

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

export function demoCallbackRoutes(baseUrl: string, { storage }: PagesOptions): Router {
  const router = Router();
  router.get(demoCallbackPath, async (req, res) => {
    const { code, state, error, error_description } = req.query;
    const page = demoCallbackPage({
      baseUrl,
      redirectUri: `${baseUrl}${demoCallbackPath}`,
      code: text(code),
      state: text(state),
      error: text(error),
      errorDescription: text(error_description),
      visitor: await viewerOf(storage, req),
    });
    html(res, 200, page);
  });
  return router;
}
