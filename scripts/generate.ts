// Writes the packages' types from the OpenAPI document; `--check` only reports whether a file is stale.
import { readFile, writeFile } from 'node:fs/promises';
import { generateTypes } from './lib/generate-types.js';
import { generatedTypesPaths } from './lib/paths.js';

const fresh = await generateTypes();
let stale = 0;
for (const path of generatedTypesPaths) {
  const current = await readFile(path, 'utf8').catch(() => '');
  if (fresh === current) continue;
  stale++;
  if (process.argv.includes('--check')) console.error(`${path} is stale: run npm run generate`);
  else {
    await writeFile(path, fresh);
    console.log(`wrote ${path}`);
  }
}
if (stale && process.argv.includes('--check')) process.exit(1);
if (!stale) console.log('generated types are up to date');
