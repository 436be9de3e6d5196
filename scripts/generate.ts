// Writes what is generated from the OpenAPI document: the SDK's types (one file) and the server's compiled contract
// (its request checks and route table, packages/server/scripts/compile-contract.ts); `--check` only reports whether
// either is stale.
import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { generateTypes } from './lib/generate-types.js';
import { generatedTypesPath as path, repoRoot } from './lib/paths.js';

const check = process.argv.includes('--check');
const fresh = await generateTypes();
const stale = fresh !== (await readFile(path, 'utf8').catch(() => ''));
if (!stale) console.log('generated types are up to date');
else if (check) {
  console.error(`${path} is stale: run npm run generate`);
  process.exitCode = 1;
} else {
  await writeFile(path, fresh);
  console.log(`wrote ${path}`);
}
try {
  // In its own process: it runs express-openapi-validator over the document, which this one need not load.
  execFileSync(process.execPath, [...process.execArgv, 'packages/server/scripts/compile-contract.ts', ...(check ? ['--check'] : [])], { cwd: repoRoot, stdio: 'inherit' });
} catch {
  process.exitCode = 1;
}
