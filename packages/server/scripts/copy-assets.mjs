// After tsc and the bundle: what the built server reads besides its code, written into a dist directory. The OpenAPI
// document, as the YAML file it is served as and converted once to JSON, which the server loads at start in a few
// milliseconds where parsing the YAML took 150-300 (src/openapi/document.ts); and Swagger UI's browser bundle for the
// API reference page (/help/api), copied from the swagger-ui-dist devDependency so that installing the server pulls
// neither it nor its install-time analytics; its licence files travel with it. The stylesheet's source-map comment is
// dropped, since the map is not shipped. Written through update-file.mjs: nothing a running server may still serve is
// half-written or disappears. The test run's bundle (test/support/server-build-global-setup.ts) gets the same files.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { update } from './update-file.mjs';

const swaggerUi = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const documentSource = fileURLToPath(new URL('../../../openapi/openapi.yaml', import.meta.url));

/** Copies the document and Swagger UI's files into `dist` (a directory path). */
export async function copyAssets(dist) {
  const target = join(dist, 'reference-ui');
  mkdirSync(target, { recursive: true });
  const yamlText = readFileSync(documentSource);
  // The YAML parser only when the document changed (or its JSON is missing): it is most of this script's time.
  if (update(join(dist, 'openapi.yaml'), yamlText) || !existsSync(join(dist, 'openapi.json'))) {
    const { parse } = await import('yaml');
    update(join(dist, 'openapi.json'), JSON.stringify(parse(yamlText.toString('utf8'))));
  }
  for (const file of ['swagger-ui-bundle.js', 'swagger-ui-bundle.js.LICENSE.txt', 'oauth2-redirect.html', 'oauth2-redirect.js', 'LICENSE', 'NOTICE']) {
    update(join(target, file), readFileSync(join(swaggerUi, file)));
  }
  const css = readFileSync(join(swaggerUi, 'swagger-ui.css'), 'utf8').replace(/\s*\/\*# sourceMappingURL=\S+\s*\*\/\s*$/, '\n');
  update(join(target, 'swagger-ui.css'), css);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await copyAssets(fileURLToPath(new URL('../dist', import.meta.url)));
