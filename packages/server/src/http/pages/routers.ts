// Every page's router, composed; imported at the first page request (pages/stack.ts), with the markup they render.
import { Router } from 'express';
import { adminRoutes } from './admin-routes.js';
import { applicationsRoutes } from './applications-routes.js';
import { authorizeRoutes } from './authorize-routes.js';
import { demoCallbackRoutes } from './demo-callback-routes.js';
import { deviceRoutes } from './device-routes.js';
import { homeRoutes } from './home-routes.js';
import { personalAccessTokensRoutes } from './personal-access-tokens-routes.js';
import type { PagesOptions } from './shared.js';
import { signInRoutes } from './sign-in-routes.js';

export function pageRouters(options: PagesOptions & { baseUrl: string }): Router {
  return Router().use(
    homeRoutes(options),
    demoCallbackRoutes(options.baseUrl, options),
    signInRoutes(options),
    authorizeRoutes(options),
    deviceRoutes(options),
    applicationsRoutes(options),
    personalAccessTokensRoutes(options),
    adminRoutes(options),
  );
}
