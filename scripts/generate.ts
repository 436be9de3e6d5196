// Writes the SDK's types from the OpenAPI document; `--check` only reports whether the file is stale.
import { readFile, writeFile } from 'node:fs/promises';
import { generateTypes } from './lib/generate-types.js';
import { generatedTypesPath } from './lib/paths.js';

const fresh = await generateTypes();
const current = await readFile(generatedTypesPath, 'utf8').catch(() => '');
if (process.argv.includes('--check')) {
  if (fresh !== current) {
    console.error(`${generatedTypesPath} is stale: run npm run generate`);
    process.exit(1);
  }
  console.log('generated types are up to date');
} else if (fresh !== current) {
  await writeFile(generatedTypesPath, fresh);
  console.log(`wrote ${generatedTypesPath}`);
} else {
  console.log('generated types already up to date');
}
