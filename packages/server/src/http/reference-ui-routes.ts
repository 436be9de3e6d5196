// The rendered API reference (pages/reference.ts) and the Swagger UI bundle it runs, served from this origin: no CDN,
// so the page works offline and its CSP names no third party.
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import compression from 'compression';
import { Router, type RequestHandler } from 'express';
import helmet from 'helmet';
import { fromSource, packageFile } from '../package-files.js';
import { referenceAssetsPath, referenceOAuthRedirectPath, referencePage, referencePath, referenceScript, referenceStylesheet } from '../pages/reference.js';
import { baseDirectives } from './pages/headers.js';
import { html } from './pages/shared.js';

/**
 * Where Swagger UI's files are: copied beside the built server (scripts/copy-assets.mjs), or, when running from
 * source, the swagger-ui-dist devDependency.
 */
function swaggerUiDirectory(): string {
  if (!fromSource) return packageFile('dist/reference-ui');
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

/**
 * The pages' policy with scripts from 'self' (Swagger UI and its starter, never inline), images from data: URLs
 * (its icons are inline SVG in the stylesheet) and fetches from 'self' (the document and "Try it out").
 */
const referencePolicy = helmet.contentSecurityPolicy({
  useDefaults: false,
  directives: { ...baseDirectives, scriptSrc: ["'self'"], imgSrc: ["'self'", 'data:'], connectSrc: ["'self'"] },
});

const oneDay = { 'Cache-Control': 'public, max-age=86400' };

export function referenceUiRouter(baseUrl: string): Router {
  const router = Router();
  // Swagger UI's bundle is about 1.5 MB: compressed, the reference loads in a fifth of the bytes. Only here and on
  // the documents: answers that carry tokens are never compressed beside what a request reflects (BREACH).
  router.use([referencePath, referenceAssetsPath], compression());
  router.get(referencePath, referencePolicy, ((_req, res) => html(res, 200, referencePage(baseUrl))) as RequestHandler);
  router.get(`${referenceAssetsPath}/reference.js`, (_req, res) => {
    res.set(oneDay).type('text/javascript').send(referenceScript);
  });
  router.get(`${referenceAssetsPath}/reference.css`, (_req, res) => {
    res.set(oneDay).type('text/css').send(referenceStylesheet);
  });
  let directory: string | undefined;
  // The page "Authorize" sends the browser back to, which hands the code to the reference in its opener; its script
  // is a file of its own, so the page runs under the same policy.
  router.get(referenceOAuthRedirectPath, referencePolicy);
  for (const file of ['swagger-ui-bundle.js', 'swagger-ui.css', 'oauth2-redirect.html', 'oauth2-redirect.js']) {
    router.get(`${referenceAssetsPath}/${file}`, (_req, res, next) => {
      directory ??= swaggerUiDirectory();
      res.sendFile(file, { root: directory, maxAge: '1d' }, (error) => (error ? next(error) : undefined));
    });
  }
  return router;
}
