// After tsc: what the built server reads besides its code. The OpenAPI document, as the YAML file it is served as and
// converted once to JSON, which the server loads at start in a few milliseconds where parsing the YAML took 150-300
// (src/openapi/document.ts); and Swagger UI's browser bundle for
// the API reference page (/help/api), copied from the swagger-ui-dist devDependency so that installing the server
// pulls neither it nor its install-time analytics; its licence files travel with it. The stylesheet's source-map
// comment is dropped, since the map is not shipped.
//
// A server may be running from dist/ while this runs (npm start in another terminal), so a file whose content is
// already right is left alone, and one that changes is written beside it and renamed over it: a reader sees the old
// file or the new one, never half of one, and nothing it may still serve disappears.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const swaggerUi = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const target = 'dist/reference-ui';

/** Writes `content` to `file` unless it holds it already; says whether it wrote. */
function update(file, content) {
  const bytes = Buffer.from(content);
  if (existsSync(file) && readFileSync(file).equals(bytes)) return false;
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, bytes);
  renameSync(temporary, file);
  return true;
}

mkdirSync(target, { recursive: true });
const yamlText = readFileSync('../../openapi/openapi.yaml');
// The YAML parser only when the document changed (or its JSON is missing): it is most of this script's time.
if (update('dist/openapi.yaml', yamlText) || !existsSync('dist/openapi.json')) {
  const { parse } = await import('yaml');
  update('dist/openapi.json', JSON.stringify(parse(yamlText.toString('utf8'))));
}
for (const file of ['swagger-ui-bundle.js', 'swagger-ui-bundle.js.LICENSE.txt', 'oauth2-redirect.html', 'oauth2-redirect.js', 'LICENSE', 'NOTICE']) {
  update(join(target, file), readFileSync(join(swaggerUi, file)));
}
const css = readFileSync(join(swaggerUi, 'swagger-ui.css'), 'utf8').replace(/\s*\/\*# sourceMappingURL=\S+\s*\*\/\s*$/, '\n');
update(join(target, 'swagger-ui.css'), css);
