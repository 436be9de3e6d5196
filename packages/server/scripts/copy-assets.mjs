// After tsc: what the built server reads besides its code. The OpenAPI document, as the YAML file it is served as and
// converted once to JSON, which the server loads at start in a few milliseconds where parsing the YAML took 150-300
// (src/openapi/document.ts); and Swagger UI's browser bundle for
// the API reference page (/help/api), copied from the swagger-ui-dist devDependency so that installing the server
// pulls neither it nor its install-time analytics; its licence files travel with it. The stylesheet's source-map
// comment is dropped, since the map is not shipped.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';

const swaggerUi = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const target = 'dist/reference-ui';

copyFileSync('../../openapi/openapi.yaml', 'dist/openapi.yaml');
writeFileSync('dist/openapi.json', JSON.stringify(parse(readFileSync('dist/openapi.yaml', 'utf8'))));
mkdirSync(target, { recursive: true });
for (const file of ['swagger-ui-bundle.js', 'swagger-ui-bundle.js.LICENSE.txt', 'oauth2-redirect.html', 'oauth2-redirect.js', 'LICENSE', 'NOTICE']) {
  copyFileSync(join(swaggerUi, file), join(target, file));
}
const css = readFileSync(join(swaggerUi, 'swagger-ui.css'), 'utf8').replace(/\s*\/\*# sourceMappingURL=\S+\s*\*\/\s*$/, '\n');
writeFileSync(join(target, 'swagger-ui.css'), css);
