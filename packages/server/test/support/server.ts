// Starts the real application on 127.0.0.1 and a free port, by default on an in-memory store seeded from the example
// fixture; on a fresh PostgreSQL database instead when TOKENBELL_TEST_STORE=postgres (the `postgres` test project
// runs the HTTP suites so) or when a test asks for it.
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { LoginThrottle, type LoginThrottlePolicy } from '../../src/domain/login-throttle.js';
import { startMailDelivery, type MailTransport } from '../../src/domain/mail-delivery.js';
import { createApp } from '../../src/http/app.js';
import { TestKit } from '../../src/domain/testing/test-kit.js';
import { fileBackend, type Backend } from '../../src/store/backend.js';
import { openStore, type Store } from '../../src/store/file/store.js';
import type { Storage } from '../../src/domain/storage/index.js';
import { inject } from 'vitest';
import { freshMigratedDatabase } from '../../../../test/support/postgres.js';
import { loadSeed } from '../../src/domain/seed/load.js';
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
  /** The server's storage, whichever store is under it. */
  storage: Storage;
  /** The file store under the server; a test that reads it runs on the file store only (it throws on PostgreSQL). */
  store: Store;
  /** Which store the server runs on. */
  kind: 'file' | 'postgres';
  /**
   * Runs a query on the server's database, for what a test must check that the Storage interface does not answer
   * (a count of codes, every row of a table); throws on the file store, whose `store` answers such questions.
   */
  sql<Row = Record<string, unknown>>(text: string, params?: unknown[]): Promise<Row[]>;
  /**
   * Every row of every table of the server's database but `except`, each table's rows as JSON in a stable order
   * (PostgreSQL only): the database's counterpart of the file store's `data`.
   */
  tables(except?: readonly string[]): Promise<Record<string, unknown[]>>;
  /** Everything the store holds, as JSON text: the file store's data, or every row of the database. */
  dump(): Promise<string>;
  /** How many records of a collection the store holds, on either store. */
  count(collection: CountedCollection): Promise<number>;
  /** The server's clock in epoch seconds; move it with `advance`. */
  now(): number;
  advance(seconds: number): void;
  close(): Promise<void>;
  logs: string[];
}

export interface TestServerOptions {
  tokenTtl?: number;
  throttle?: LoginThrottle;
  /**
   * A sign-in throttle with this policy, counting where the store's own throttle counts: in this process beside the
   * file store, in the database on PostgreSQL.
   */
  throttlePolicy?: LoginThrottlePolicy;
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
  /** The store: the file store in memory (or `file`), or a fresh PostgreSQL database; TOKENBELL_TEST_STORE by default. */
  kind?: 'file' | 'postgres';
  /** A backend of the test's own (e.g. two servers on one database), instead of a fresh one. */
  backend?: Backend;
  /** `--test-helpers`. */
  testHelpers?: boolean;
  /**
   * A delivery worker on the server's clock, sending through this transport, as the CLI starts one (polling every
   * 25 ms, retrying after 1 second); none when absent, and mail waits in the outbox.
   */
  mailTransport?: MailTransport;
}

/** The collections a test counts: the file store's, named as PostgreSQL's tables are. */
export type CountedCollection = 'applications' | 'authorization_codes' | 'access_tokens' | 'personal_access_tokens' | 'sessions' | 'notification_settings';

/** Which store the HTTP suites run on in this test project. */
export const testStoreKind = (): 'file' | 'postgres' => (process.env.TOKENBELL_TEST_STORE === 'postgres' ? 'postgres' : 'file');

interface FreshBackend {
  backend: Backend;
  store: Store | null;
  /** The database's URL on PostgreSQL. */
  databaseUrl: string | null;
  close(): Promise<void>;
}

async function freshBackend(kind: 'file' | 'postgres', file: string | undefined): Promise<FreshBackend> {
  if (kind === 'file') {
    const store = await openStore({ file: file ?? null });
    return { backend: await fileBackend(store), store, databaseUrl: null, close: () => store.close() };
  }
  const database = await freshMigratedDatabase(inject('postgresUrl'));
  const { openPostgresBackend } = await import('../../src/store/postgres/backend.js');
  const backend = await openPostgresBackend({ url: database.url, poolSize: 10, migrate: false });
  return {
    backend,
    store: null,
    databaseUrl: database.url,
    async close() {
      await backend.storage.maintenance.close();
      await database.drop();
    },
  };
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const kind = options.kind ?? (options.file !== undefined ? 'file' : testStoreKind());
  const fresh: FreshBackend = options.backend ? { backend: options.backend, store: null, databaseUrl: null, close: async () => {} } : await freshBackend(kind, options.file);
  const { backend } = fresh;
  if (!options.backend) await loadSeed(backend.storage, options.seed ?? JSON.parse(await readFile(exampleSeedPath, 'utf8')));
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
  const mailDelivery = options.mailTransport ? startMailDelivery(backend.storage.mail, options.mailTransport, { now, pollMs: 25, backoffSeconds: 1 }) : undefined;
  // The state a reset goes back to is the store as seeded above.
  const testKit = options.testHelpers ? new TestKit(backend.storage, now) : undefined;
  await testKit?.markSeeded();
  const app = createApp({
    backend,
    now,
    ...(testKit ? { testKit } : {}),
    ...(mailDelivery ? { mailDelivery } : {}),
    log: (m) => logs.push(m),
    ...(options.throttle ? { throttle: options.throttle } : {}),
    ...(options.throttlePolicy ? { throttle: new LoginThrottle(options.throttlePolicy, backend.throttleBacking) } : {}),
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
      ...(options.testHelpers ? { testHelpers: true } : {}),
      ...(options.proxy ? { ...options.proxy, secureCookies: options.proxy.baseUrl.startsWith('https:') } : {}),
    },
  });
  server.on('request', app);
  // The test's own connections to the database, apart from the server's pool; opened when first asked for.
  let pool: Promise<import('pg').Pool> | undefined;
  const sql = async <Row>(text: string, params: unknown[] = []): Promise<Row[]> => {
    const url = fresh.databaseUrl;
    if (url === null) throw new Error(`this test asks the database, and this server runs on ${fresh.store ? 'the file store' : "a backend of the test's own"}`);
    pool ??= import('pg').then(({ default: pg }) => new pg.Pool({ connectionString: url, max: 2 }));
    return (await (await pool).query(text, params)).rows as Row[];
  };
  let tableNames: Promise<string[]> | undefined;
  const tables = async (except: readonly string[] = []): Promise<Record<string, unknown[]>> => {
    tableNames ??= sql<{ name: string }>(`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`).then((rows) => rows.map((r) => r.name));
    const names = (await tableNames).filter((name) => !except.includes(name));
    // One statement, so that the tables are read at one moment (and a test that reads them often stays quick).
    const columns = names.map((name) => `(SELECT coalesce(json_agg(row_to_json(t) ORDER BY row_to_json(t)::text), '[]') FROM "${name}" t) AS "${name}"`);
    const [row] = await sql<Record<string, unknown[]>>(`SELECT ${columns.join(', ')}`);
    return row!;
  };
  return {
    baseUrl,
    storage: backend.storage,
    get store(): Store {
      if (!fresh.store) throw new Error('this test reads the file store, and this server runs on PostgreSQL');
      return fresh.store;
    },
    kind: fresh.store ? 'file' : 'postgres',
    sql,
    tables,
    dump: async () => JSON.stringify(fresh.store ? fresh.store.data : await tables()),
    async count(collection) {
      if (fresh.store) return fresh.store.data[collection].length;
      const [row] = await sql<{ count: string }>(`SELECT count(*) AS count FROM ${collection}`);
      return Number(row!.count);
    },
    now,
    advance: (s) => {
      offset += s;
    },
    logs,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await mailDelivery?.stop();
      if (pool) await (await pool).end();
      await fresh.close();
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
