// Reading a data file and its journal as a store opens on them (store.ts): each checked, a file of an earlier version
// upgraded in memory, and a missing file read as a fresh one. Apart from the Store, which only ever sees data of this
// version.
import { randomBytes } from 'node:crypto';
import { DurableJsonFile } from './durable-json-file.js';
import { Journal, JournalCorruptError, journalFileOf } from './journal.js';
import { SCHEMA_VERSION, type StoreData } from './schema.js';
import { StoreCorruptError, StoreVersionError } from '../errors.js';
import { collectionsAddedInVersion3, collectionsWithAddedFields, opWithAddedFields, upgradeData, upgradeOp, withAddedFields } from './upgrade.js';
import { collections } from './indexes.js';

/** A new data file's content: every collection empty, and a session key of its own. */
export function freshData(): StoreData {
  return {
    version: SCHEMA_VERSION,
    journal: 0,
    secrets: { session_key: randomBytes(32).toString('base64url') },
    sequences: { users: 0, groups: 0, projects: 0, applications: 0, personal_access_tokens: 0 },
    users: [],
    groups: [],
    projects: [],
    applications: [],
    personal_access_tokens: [],
    authorization_codes: [],
    access_tokens: [],
    notification_settings: [],
    sessions: [],
    notification_events: [],
    outbox: [],
    device_grants: [],
    signing_keys: [],
  };
}

/** The snapshot and journal as found on disk, both checked; a missing snapshot reads as a fresh store. */
export async function readDurable(adapter: DurableJsonFile<StoreData>) {
  const path = adapter.file;
  let read: unknown;
  try {
    read = await adapter.read();
  } catch (error) {
    throw new StoreCorruptError(`cannot read the data file ${path}: ${(error as Error).message}; it was left unchanged`, {
      cause: error,
    });
  }
  const upgraded = read !== null && upgradeIfOlder(read);
  const data = read === null ? freshData() : checkShape(read, path);
  let journal: Awaited<ReturnType<typeof Journal.read>>;
  try {
    journal = await Journal.read(journalFileOf(path));
  } catch (error) {
    if (!(error instanceof JournalCorruptError)) throw error;
    throw new StoreCorruptError(`${error.message}; it and the data file ${path} were left unchanged`, { cause: error });
  }
  // A journal continues its snapshot, so it is in the snapshot's version.
  if (upgraded && journal) journal = { ...journal, ops: journal.ops.map(upgradeOp) };
  if (journal) journal = { ...journal, ops: journal.ops.map(opWithAddedFields) };
  return { data, journal, upgraded };
}

/**
 * Upgrades the content of a data file of an earlier version in place (upgrade.ts), answering whether it did. Version 1
 * files predate the journal and read as generation 0. A version this code does not know is left to checkShape.
 */
function upgradeIfOlder(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const data = value as Record<string, unknown>;
  if (data.version === 1 && data.journal === undefined) data.journal = 0;
  else if (data.version !== 2) return false;
  upgradeData(data);
  data.version = SCHEMA_VERSION;
  return true;
}

function checkShape(value: unknown, path: string): StoreData {
  const corrupt = (why: string) => new StoreCorruptError(`the data file ${path} ${why}; it was left unchanged`);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw corrupt('is not a JSON object');
  const data = value as Record<string, unknown>;
  if (data.version !== SCHEMA_VERSION) {
    throw new StoreVersionError(
      `the data file ${path} has schema version ${JSON.stringify(data.version)}, but this tokenbell reads version ${SCHEMA_VERSION}; it was left unchanged`,
    );
  }
  const secrets = data.secrets as Record<string, unknown> | undefined;
  if (typeof secrets !== 'object' || secrets === null || typeof secrets.session_key !== 'string') {
    throw corrupt('has no secrets.session_key');
  }
  const sequences = data.sequences as Record<string, unknown> | undefined;
  for (const name of Object.keys(freshData().sequences)) {
    if (typeof sequences !== 'object' || sequences === null || !Number.isInteger(sequences[name])) {
      throw corrupt(`has no integer sequences.${name}`);
    }
  }
  // Collections added within version 3 start empty in files written before them.
  for (const collection of collectionsAddedInVersion3) data[collection] ??= [];
  for (const collection of collections) {
    if (!Array.isArray(data[collection])) throw corrupt(`has no array "${collection}"`);
  }
  // Fields added within version 3 read as their default in records written before them.
  for (const collection of collectionsWithAddedFields) data[collection] = (data[collection] as unknown[]).map((record) => withAddedFields(collection, record));
  if (!Number.isSafeInteger(data.journal) || (data.journal as number) < 0) throw corrupt('has no journal generation');
  return value as StoreData;
}
