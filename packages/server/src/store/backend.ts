// Where an instance keeps its state: the JSON data file (or memory), which one process owns, or a PostgreSQL
// database, which every instance on it shares, sessions, cookie key and sign-in throttle included.
import { ConfigError } from '../config.js';
import { memoryThrottleBacking } from './file/throttle.js';
import { type ThrottleBacking } from '../domain/storage/index.js';
import { openStore, type Store } from './file/store.js';
import { fileStorage } from './file/storage.js';
import type { Storage } from '../domain/storage/index.js';

export interface Backend {
  storage: Storage;
  /** Signs the session cookie and the sign-in form's CSRF cookie. */
  sessionSecret: string;
  /** Where the sign-in throttle counts failures and remembers addresses. */
  throttleBacking: ThrottleBacking;
}

/** The file store's backend; the throttle counts in this process, the only one that may open the file. */
export async function fileBackend(store: Store): Promise<Backend> {
  const storage = fileStorage(store);
  return { storage, sessionSecret: await storage.maintenance.instanceSecret('session_key'), throttleBacking: memoryThrottleBacking() };
}

export interface BackendOptions {
  /** The JSON data file, or null for memory; ignored with a database. */
  dataFile: string | null;
  databaseUrl: string | null;
  databasePoolSize: number;
  /** Seconds a connection, a wait for a free one or a statement may take (the setting's default when absent); ignored without a database. */
  databaseTimeout?: number;
  /** Migrate the database before using it. */
  migrate: boolean;
}

export async function openBackend(options: BackendOptions): Promise<Backend> {
  if (options.databaseUrl === null) return fileBackend(await openStore({ file: options.dataFile }));
  // Loaded only here, so that a server on the JSON file never loads the PostgreSQL driver.
  const { openPostgresBackend } = await import('./postgres/backend.js');
  return openPostgresBackend({ url: options.databaseUrl, poolSize: options.databasePoolSize, timeoutSeconds: options.databaseTimeout, migrate: options.migrate });
}

/** The database a URL names, without its password, for the listening line and errors. */
export function describeDatabase(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    parsed.search = '';
    return `PostgreSQL ${parsed.toString()}`;
  } catch {
    throw new ConfigError('--database-url is not a URL');
  }
}
