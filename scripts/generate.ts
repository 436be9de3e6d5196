// Writes the types of the OpenAPI document (one file, in the SDK); `--check` only reports whether it is stale.
import { readFile, writeFile } from 'node:fs/promises';
import { generateTypes } from './lib/generate-types.js';
import { generatedTypesPath as path } from './lib/paths.js';

const fresh = await generateTypes();
const stale = fresh !== (await readFile(path, 'utf8').catch(() => ''));
if (!stale) console.log('generated types are up to date');
else if (process.argv.includes('--check')) {
  console.error(`${path} is stale: run npm run generate`);
  process.exit(1);
} else {
  await writeFile(path, fresh);
  console.log(`wrote ${path}`);
}
