// The test kit first in a fresh process, from the build as an installed package is imported: startTokenbell() on
// the contract seed, then kit.signIn() of a seeded user to the seed's public application (the authorization request
// approved in-process, the code exchanged with PKCE at POST /oauth/token), the kit's own way to a first token.
// Prints `{"import_ms", "start_to_token_ms", "rss_after_start_mib"}`, the module's import apart as oauth2-mock-server.ts
// reports it, and the process's resident memory once the instance has started (before the first request).
// `node kit-first-token.mjs DIST_TESTING_JS SEED_FILE CLIENT_ID` (compiled by lib/servers.ts)
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [testingJs, seed, clientId] = process.argv.slice(2) as [string, string, string];
const importing = performance.now();
const { startTokenbell } = (await import(pathToFileURL(testingJs).href)) as typeof import('../../packages/server/src/testing.js');
const starting = performance.now();
const kit = await startTokenbell({ seed });
const rss = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) / 1024;
const tokens = await kit.signIn({ username: 'jsmith', clientId });
if (!tokens.access_token) throw new Error(`signIn answered no access token: ${JSON.stringify(tokens)}`);
const answered = performance.now();
await kit.close();
process.stdout.write(`${JSON.stringify({ import_ms: starting - importing, start_to_token_ms: answered - starting, rss_after_start_mib: rss })}\n`);
