// Writes src/openapi/generated/contract.ts from the OpenAPI document (src/openapi/compile.ts says what it holds);
// `--check` only reports whether it is stale. Run by `npm run generate` and by the server's build.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { compileContract } from '../src/openapi/compile.js';
import { document } from '../src/openapi/document.js';

const path = fileURLToPath(new URL('../src/openapi/generated/contract.ts', import.meta.url));
const { source } = await compileContract(document);
const stale = source !== (await readFile(path, 'utf8').catch(() => ''));
if (!stale) console.log('the compiled contract is up to date');
else if (process.argv.includes('--check')) {
  console.error(`${path} is stale: run npm run generate`);
  process.exit(1);
} else {
  await writeFile(path, source);
  console.log(`wrote ${path}`);
}
