// The API reference's paths, answered by its router (reference-ui-routes.ts) imported at the first request for
// one of them: Swagger UI's routes, its policy and the page are for people reading the reference, not for the
// clients and tests most instances serve.
import { Router } from 'express';
import { referenceAssetsPath, referencePath } from '../pages/reference-paths.js';
import { lazyRouter } from './lazy-router.js';

export function referenceRouter(baseUrl: string): Router {
  // Routed rather than mounted, so that the reference's router sees the whole path, as it would if it were here.
  return Router().all([referencePath, `${referenceAssetsPath}/*file`], lazyRouter(async () => (await import('./reference-ui-routes.js')).referenceUiRouter(baseUrl)));
}
