// oauth2-mock-server (the pinned devDependency), first in a fresh process, as a suite that mocks its provider starts
// it: a signing key generated, start() on a free loopback port, then a client_credentials POST to its /token, which
// answers a signed JWT. Prints `{"import_ms", "start_to_token_ms"}`: the module's import apart, as the test kit's.
// `node oauth2-mock-server.mjs` (compiled by lib/servers.ts)
const importing = performance.now();
const { OAuth2Server } = await import('oauth2-mock-server');
const starting = performance.now();
const server = new OAuth2Server();
// The mock signs nothing until it has a key, so generating one is part of what a suite waits for.
await server.issuer.keys.generate('RS256');
await server.start(0, '127.0.0.1');
const response = await fetch(`${server.issuer.url}/token`, {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from('bench-client:bench-secret').toString('base64')}` },
  body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'api' }).toString(),
});
const body = (await response.json()) as { access_token?: string };
if (response.status !== 200 || !body.access_token) throw new Error(`oauth2-mock-server answered ${response.status}: ${JSON.stringify(body)}`);
const answered = performance.now();
await server.stop();
process.stdout.write(`${JSON.stringify({ import_ms: starting - importing, start_to_token_ms: answered - starting })}\n`);
