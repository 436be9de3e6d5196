// The peer for the token endpoint: node-oidc-provider (the pinned devDependency) with its in-memory adapter, opaque
// access tokens, refresh-token rotation on every use, one confidential client (client_secret_basic, the
// refresh_token grant) and introspection on. Run as its own process:
// `node peer-oidc-provider.mjs PORT CONTROL_PORT CLIENT_ID CLIENT_SECRET` (compiled by lib/servers.ts).
//
// The adapter is the provider's own in-memory one (lib/adapters/memory_adapter.js) over a plain Map: its default
// storage is an LRU of 1,000 entries, which would evict the minted pool in the middle of a run.
//
// Its refresh and access tokens are minted without a browser, directly through the provider's own models in this
// process (a Grant, then RefreshToken and AccessToken saved through the adapter), exactly what its authorization code
// grant stores; the bench asks for them on CONTROL_PORT (`POST /mint?refresh=N`), a second server, so the measured
// port serves nothing but the provider.
import { createServer } from 'node:http';
import Provider from 'oidc-provider';
import MemoryAdapter, { setStorage } from 'oidc-provider/lib/adapters/memory_adapter.js';

const [port, controlPort, clientId, clientSecret] = process.argv.slice(2) as [string, string, string, string];
const issuer = `http://127.0.0.1:${port}`;
const accountId = 'bench-user';

setStorage(new Map());
const provider = new Provider(issuer, {
  adapter: MemoryAdapter,
  clients: [{ client_id: clientId, client_secret: clientSecret, grant_types: ['authorization_code', 'refresh_token'], redirect_uris: ['http://127.0.0.1:8080/callback'], token_endpoint_auth_method: 'client_secret_basic' }],
  features: { introspection: { enabled: true }, devInteractions: { enabled: false } },
  // Rotation on every use, as tokenbell rotates.
  rotateRefreshToken: () => true,
  findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  cookies: { keys: ['bench-cookie-key-not-secret'] },
  ttl: { AccessToken: 7200, RefreshToken: 30 * 24 * 3600, Grant: 30 * 24 * 3600 },
});
provider.proxy = false;

async function grant(): Promise<string> {
  const g = new provider.Grant({ accountId, clientId });
  g.addOIDCScope('offline_access');
  return g.save();
}

async function mint(refresh: number, access: number): Promise<{ refreshTokens: string[]; accessTokens: string[] }> {
  const client = await provider.Client.find(clientId);
  if (!client) throw new Error('no client');
  const refreshTokens: string[] = [];
  const accessTokens: string[] = [];
  for (let i = 0; i < refresh; i++) {
    const grantId = await grant();
    refreshTokens.push(await new provider.RefreshToken({ accountId, client, grantId, scope: 'offline_access', gty: 'authorization_code' }).save());
  }
  for (let i = 0; i < access; i++) {
    const grantId = await grant();
    accessTokens.push(await new provider.AccessToken({ accountId, client, grantId, scope: 'offline_access', gty: 'authorization_code' }).save());
  }
  return { refreshTokens, accessTokens };
}

const server = provider.listen(Number(port), '127.0.0.1');
const control = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://control');
  mint(Number(url.searchParams.get('refresh') ?? 0), Number(url.searchParams.get('access') ?? 0)).then(
    (minted) => res.setHeader('content-type', 'application/json').end(JSON.stringify(minted)),
    (error: unknown) => res.writeHead(500).end(String(error instanceof Error ? error.stack : error)),
  );
}).listen(Number(controlPort), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close();
  control.close();
  process.exit(0);
});
