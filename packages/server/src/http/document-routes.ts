// The OpenAPI document where the server runs: at stable URLs, as YAML (the file itself) and as JSON, so clients and
// tools can read the contract of the instance they talk to.
import { readFileSync } from 'node:fs';
import compression from 'compression';
import { Router } from 'express';
import { document, documentPath } from '../openapi/document.js';

export function documentRouter(): Router {
  // Read and serialised at the first request for them, not at every start (a test kit starts many instances).
  let yaml: string | undefined;
  let json: string | undefined;
  const router = Router();
  // About 200 kB each, public and the same for everyone: worth compressing (nothing secret rides with them).
  // (YAML too, which the compressible list does not name.)
  router.use(['/openapi.yaml', '/openapi.json'], compression({ filter: () => true }));
  const cacheable = { 'Cache-Control': 'public, max-age=300', 'X-Content-Type-Options': 'nosniff' };
  router.get('/openapi.yaml', (_req, res) => {
    res.set(cacheable).type('application/yaml').send((yaml ??= readFileSync(documentPath, 'utf8')));
  });
  router.get('/openapi.json', (_req, res) => {
    res.set(cacheable).type('application/json').send((json ??= JSON.stringify(document)));
  });
  return router;
}
