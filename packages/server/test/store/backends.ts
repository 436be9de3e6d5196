// The store suite's harness: each backend the storage contract runs on (the file store in memory and on disk, and
// PostgreSQL from two pools at once, as two instances would), closed after each test, and the rows the tests build.
// The tests beside it, one per port of domain/storage/, expect the same answers of every backend (the file store is
// the reference), down to the words of a refusal and the order of a list. This is the one test module that opens a
// store, so a change to how the stores are built or where their modules live is made here alone.
import { resolve } from 'node:path';
import pg from 'pg';
import { afterEach, inject } from 'vitest';
import { InputError } from '../../src/explained-error.js';
import { noEvents } from '../../src/domain/notification-levels.js';
import { openStore, readDurableData, type Store } from '../../src/store/file/store.js';
import { fileStorage } from '../../src/store/file/storage.js';
import { postgresStorage, type PostgresStorageOptions } from '../../src/store/postgres/storage.js';
import type { StoreData } from '../../src/store/file/schema.js';
import type { AuthorizationCodeRecord, NotificationSettingRecord } from '../../src/domain/storage/records.js';
import type { NewApplicationRow, NewGroupRow, NewPersonalAccessTokenRow, NewProjectRow, NewTokenPair, NewUserRow, Storage } from '../../src/domain/storage/index.js';
import { migratedDatabase, recordStatements } from '../../../../test/support/postgres.js';
import { useTempStores } from './temp-store.js';

export type { StoreData };

export const inMemory = 'the file store in memory';
export const onDisk = 'the file store on disk';
export const onPostgres = 'PostgreSQL';
/** Every backend, for `describe.each`. */
export const everyBackend = [inMemory, onDisk, onPostgres];
/** The file store's two ways to live, for what only a store in one instance does (snapshots). */
export const fileStores = [inMemory, onDisk];

export interface Subject {
  /** One storage per instance: a file store has one, PostgreSQL two, on two pools of one database. */
  storages: [Storage, ...Storage[]];
  /** What `describe()` answers. */
  described: string;
  /** A storage on the same data that a test may close. */
  closable(): Promise<Storage>;
  /** The storage as a new process would find it: the file store on disk reads its file again. */
  reopen(): Promise<Storage>;
  /** A table's rows (a collection's records) as kept, not as the interface answers them. */
  rows(table: string): Promise<Array<Record<string, unknown>>>;
  /** Everything the backend keeps, as text, to look for what it must not keep. */
  dump(): Promise<string>;
  /** The file store underneath, whose whole state a test can compare (the one reopened last); none on PostgreSQL. */
  data?(): StoreData;
  /** The state a restart would read from the data file, on disk only. */
  durableData?(): Promise<StoreData>;
}

export interface Postgres {
  url: string;
  pools: pg.Pool[];
  /** One storage per pool. */
  storages: Storage[];
}

/**
 * Registers the cleanups (every store closed, every database dropped, after each test) and answers how to open a
 * backend by name, or a PostgreSQL database with `instances` pools of its own.
 */
export function useBackends(): {
  open(name: string): Promise<Subject>;
  postgres(instances?: number): Promise<Postgres>;
  /** Two storages on one PostgreSQL database, as two instances share it. */
  instances(): Promise<[Storage, Storage]>;
} {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const temp = useTempStores();

  async function postgres(instances = 2): Promise<Postgres> {
    const { url, pools, close } = await migratedDatabase(inject('postgresUrl'), instances);
    cleanups.push(close);
    return { url, pools, storages: pools.map((pool) => postgresStorage(pool)) };
  }

  const onFile = (initial: Store, reopen: () => Promise<Store>): Omit<Subject, 'described'> => {
    let store = initial;
    const storage = fileStorage(store);
    return {
      storages: [storage],
      closable: async () => storage,
      reopen: async () => {
        store = await reopen();
        return fileStorage(store);
      },
      rows: async (table) => (store.data as unknown as Record<string, Array<Record<string, unknown>>>)[table]!,
      dump: async () => JSON.stringify(store.data),
      data: () => store.data,
    };
  };

  const backends: Record<string, () => Promise<Subject>> = {
    [inMemory]: async () => {
      const store = await openStore({ file: null });
      cleanups.push(() => store.close());
      return { ...onFile(store, async () => store), described: 'in memory' };
    },
    [onDisk]: async () => {
      const file = temp.file();
      let store = await temp.open(file);
      const subject = onFile(store, async () => {
        await store.close();
        return (store = await temp.open(file));
      });
      return { ...subject, described: resolve(file), durableData: () => readDurableData(file) };
    },
    [onPostgres]: async () => {
      const { url, pools, storages } = await postgres(2);
      const [pool] = pools as [pg.Pool, ...pg.Pool[]];
      const rows = async (table: string) => (await pool.query(`SELECT * FROM ${pg.escapeIdentifier(table)}`)).rows as Array<Record<string, unknown>>;
      return {
        storages: storages as [Storage, ...Storage[]],
        described: 'PostgreSQL',
        closable: async () => postgresStorage(new pg.Pool({ connectionString: url, max: 2 })),
        reopen: async () => postgresStorage(pool),
        rows,
        dump: async () => {
          const { rows: tables } = await pool.query<{ name: string }>(`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`);
          return JSON.stringify(Object.fromEntries(await Promise.all(tables.map(async ({ name }) => [name, await rows(name)]))));
        },
      };
    },
  };

  return {
    open: (name) => {
      const backend = backends[name];
      if (!backend) throw new Error(`no backend named ${JSON.stringify(name)}`);
      return backend();
    },
    postgres,
    instances: async () => {
      const { storages } = await postgres(2);
      return [storages[0]!, storages[1]!];
    },
  };
}

/** The PostgreSQL storage on a pool of the test's own (one that cannot reach its database, say). */
export const postgresStorageOn = (pool: pg.Pool, options?: PostgresStorageOptions): Storage => postgresStorage(pool, options);

/** The text of every statement sent through `pool.query` from now on, in order. */
export const statementsOn = (pool: pg.Pool): string[] => recordStatements(pool);

/** 2026-11-25T12:00:00Z */
export const created = 1795608000;
export const now = Math.floor(Date.UTC(2026, 10, 25, 12) / 1000);
export const day = 86_400;

export const newUser = (username: string, fields: Partial<NewUserRow> = {}): NewUserRow => ({
  username,
  email: `${username.toLowerCase()}@example.com`,
  secondary_emails: [],
  name: `${username} Example`,
  password_hash: 'scrypt$16384$8$1$salt$hash',
  two_factor_enabled: false,
  otp_secret: null,
  otp_last_step: null,
  state: 'active',
  is_admin: false,
  bio: '',
  created_at: created,
  ...fields,
});
export const newGroup = (path: string): NewGroupRow => ({ path, name: `The ${path}`, visibility: 'private', created_at: created });
export const newProject = (namespace: string, path: string): NewProjectRow => ({ namespace, path, name: `The ${path}`, visibility: 'internal', created_at: created });
export const newApplication = (ownerId: number, uid: string, confidential = true): NewApplicationRow => ({
  uid,
  secret_digest: confidential ? `secret-digest-of-${uid}` : null,
  confidential,
  name: `The ${uid}`,
  redirect_uris: ['https://app.example.com/cb', 'http://127.0.0.1:8080/cb'],
  scopes: ['api', 'read_user'],
  owner_id: ownerId,
  created_at: created,
});
export const newToken = (userId: number, tokenDigest: string, expiresAt: string | null = null): NewPersonalAccessTokenRow => ({
  user_id: userId,
  name: `token ${tokenDigest}`,
  token_digest: tokenDigest,
  scopes: ['read_api'],
  created_at: created,
  expires_at: expiresAt,
  revoked: false,
});
export const newCode = (id: string, applicationId: number, userId: number, fields: Partial<AuthorizationCodeRecord> = {}): AuthorizationCodeRecord => ({
  id,
  code_digest: `code-digest-${id}`,
  application_id: applicationId,
  user_id: userId,
  redirect_uri: 'https://app.example.com/cb',
  scopes: ['api'],
  code_challenge: null,
  code_challenge_method: null,
  created_at: now - 60,
  expires_at: now + 540,
  used_at: null,
  ...fields,
});
export const newPair = (id: string, applicationId: number | null, userId: number, issuedAt = now - 100): NewTokenPair => ({
  id,
  token_digest: `access-${id}`,
  refresh_digest: `refresh-${id}`,
  application_id: applicationId,
  user_id: userId,
  scopes: ['api'],
  now: issuedAt,
  ttl: 7200,
  auth_time: null,
});
export const setting = (
  userId: number,
  sourceType: NotificationSettingRecord['source_type'],
  sourceId: number | null,
  level: NotificationSettingRecord['level'],
): NotificationSettingRecord => ({
  user_id: userId,
  source_type: sourceType,
  source_id: sourceId,
  level,
  notification_email: null,
  events: noEvents(),
});

/** The InputError a call is refused with, as plain values. */
export async function refusal(call: Promise<unknown>): Promise<{ field: string; code: string; message: string }> {
  try {
    await call;
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    return { field: error.field, code: error.code, message: error.message };
  }
  throw new Error('expected an InputError, but the call succeeded');
}

/** How calls made at once ended: how many won, and why each of the others was refused. */
export const outcomes = (results: PromiseSettledResult<unknown>[]) => ({
  won: results.filter((r) => r.status === 'fulfilled').length,
  refused: results.flatMap((r) => (r.status === 'rejected' ? [r.reason instanceof InputError ? `${r.reason.field} ${r.reason.code}` : String(r.reason)] : [])),
});

/** The file store's groups and projects carry their member lists; the interface's do not promise them. */
export function withoutMembers<T extends object>(record: T | undefined): Omit<T, 'members'> | undefined {
  if (record === undefined) return undefined;
  const { members: _members, ...rest } = record as T & { members?: unknown };
  return rest;
}

/** Redeems a code and answers only the outcome: `unknown` shows the code is gone. */
export const redeem = (storage: Storage, id: string, applicationId: number) =>
  storage.grants.redeemCode(`code-digest-${id}`, applicationId, () => undefined, (code) => newPair(`from-${id}`, code.application_id, code.user_id), now).then((r) => r.outcome);
