// Writes src/openapi/generated/contract.ts from the OpenAPI document (src/http/contract-compiler.ts says what it holds),
// unless the module already records what it would be compiled from; `--check` only reports whether it is stale. Run
// by `npm run generate` and by the server's build.
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { compileContract, contractDigest } from '../src/http/contract-compiler.js';
import { document } from '../src/openapi/document.js';

const path = fileURLToPath(new URL('../src/openapi/generated/contract.ts', import.meta.url));
const current = await readFile(path, 'utf8').catch(() => '');
// Compiling runs the validator over the document (seconds); the digest says in milliseconds whether it is needed.
if (current.includes(`export const contractDigest = ${JSON.stringify(contractDigest(document))};`)) {
  console.log('the compiled contract is up to date');
} else if (process.argv.includes('--check')) {
  console.error(`${path} is stale: run npm run generate`);
  process.exit(1);
} else {
  const { source } = await compileContract(document);
  await writeFile(path, source);
  console.log(`wrote ${path}`);
}
