// Starts the real application on 127.0.0.1 and a free port, by default on an in-memory store seeded from the example
// fixture.
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { LoginThrottle } from '../../src/domain/login-throttle.js';
import { createApp } from '../../src/http/app.js';
import type { SessionBacking } from '../../src/http/session.js';
import { openStore, type Store } from '../../src/store/file-store.js';
import { loadSeed } from '../../src/store/seed.js';
import { exampleAccounts, exampleApplication } from './example-seed.js';

export const exampleSeedPath = fileURLToPath(new URL('../../fixtures/example-seed.json', import.meta.url));

/** Credentials from fixtures/example-seed.json. */
export const seed = {
  client: { id: exampleApplication.clientId, secret: exampleApplication.clientSecret },
  redirectUri: exampleApplication.redirectUri,
  ...exampleAccounts,
} as const;

export interface TestServer {
  baseUrl: string;
  store: Store;
  /** The server's clock in epoch seconds; move it with `advance`. */
  now(): number;
  advance(seconds: number): void;
  close(): Promise<void>;
  logs: string[];
}

export interface TestServerOptions {
  tokenTtl?: number;
  throttle?: LoginThrottle;
  /** A real data file, for tests about what reaches the disk; in memory when absent. */
  file?: string;
  /** A seed object instead of the example fixture. */
  seed?: unknown;
  /** The server checks its own answers against the document (a broken one becomes a 500); off as in production. */
  validateResponses?: boolean;
  /** Settings as behind a reverse proxy. */
  proxy?: { baseUrl: string; trustProxy: string | number | boolean };
  /** App IDs that may introspect every token (`--introspection-clients`). */
  introspectionClients?: string[];
  /** `--password-grant`. */
  passwordGrant?: 'any' | 'clients' | 'off';
  /** `--session-lifetime`, in seconds. */
  sessionLifetime?: number;
  /** `--monitoring-allowlist`. */
  monitoringAllowlist?: string[];
  /** Where sessions live and what signs their cookie; the store's own by default. */
  sessions?: SessionBacking;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const store = await openStore({ file: options.file ?? null });
  await loadSeed(store, options.seed ?? JSON.parse(await readFile(exampleSeedPath, 'utf8')));
  let offset = 0;
  const now = () => Math.floor(Date.now() / 1000) + offset;
  const logs: string[] = [];
  // Listening first, so that the app's base URL (the issuer, the metadata's endpoints, web_url) names the real port,
  // as it does for a server started by the CLI; clients that discover their endpoints depend on it.
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const app = createApp({
    store,
    now,
    log: (m) => logs.push(m),
    ...(options.throttle ? { throttle: options.throttle } : {}),
    ...(options.sessions ? { sessions: options.sessions } : {}),
    config: {
      baseUrl,
      tokenTtl: options.tokenTtl ?? 7200,
      codeTtl: 600,
      validateResponses: options.validateResponses ?? true,
      bodyLimit: '100kb',
      secureCookies: false,
      introspectionClients: options.introspectionClients ?? [],
      ...(options.passwordGrant ? { passwordGrant: options.passwordGrant } : {}),
      ...(options.sessionLifetime ? { sessionLifetime: options.sessionLifetime } : {}),
      ...(options.monitoringAllowlist ? { monitoringAllowlist: options.monitoringAllowlist } : {}),
      ...(options.proxy ? { ...options.proxy, secureCookies: options.proxy.baseUrl.startsWith('https:') } : {}),
    },
  });
  server.on('request', app);
  return {
    baseUrl,
    store,
    now,
    advance: (s) => {
      offset += s;
    },
    logs,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
    },
  };
}

export const form = (params: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(params).toString(),
});

export const json = (method: string, body: unknown) => ({
  method,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
