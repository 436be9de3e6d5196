// Data files of earlier versions, read as the current one. Version 2 named stored fields in two styles
// (`passwordHash` beside `user_id`) and kept time three ways (ISO strings, epoch seconds, session expiry in epoch
// milliseconds); version 3 has one of each: snake_case, as the PostgreSQL schema and the API spell fields, and epoch
// seconds. A version 2 journal continues a version 2 snapshot, so its operations are upgraded the same way; the store
// then folds both into a version 3 file. Fields added within version 3 are filled in as their default where a file or
// journal written before them lacks them, so such a file needs no version of its own.
import type { JournalOp } from './journal.js';

/** Collection names, version 2 → 3. */
const collections: Record<string, string> = {
  personalAccessTokens: 'personal_access_tokens',
  authorizationCodes: 'authorization_codes',
  accessTokens: 'access_tokens',
  notificationSettings: 'notification_settings',
};

/** Field names, version 2 → 3, for every collection (no field means two things across collections). */
const fields: Record<string, string> = {
  passwordHash: 'password_hash',
  otpSecret: 'otp_secret',
  otpLastStep: 'otp_last_step',
  secretDigest: 'secret_digest',
  tokenDigest: 'token_digest',
  refreshDigest: 'refresh_digest',
  codeDigest: 'code_digest',
  sid: 'sid_digest',
  expires: 'expires_at',
};

/** Version 2 kept these as ISO strings; sessions kept `expires` in epoch milliseconds. */
const isoTimes: ReadonlySet<string> = new Set(['users', 'groups', 'projects', 'applications', 'personal_access_tokens']);

const seconds = (iso: unknown) => (typeof iso === 'string' ? Math.floor(Date.parse(iso) / 1000) : iso);

const collectionName = (name: string): string => collections[name] ?? name;

/** A version 2 record or patch of `collection` (a version 3 name) as version 3 stores it. */
export function upgradeFields(collection: string, record: Record<string, unknown>): Record<string, unknown> {
  const next: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    const name = fields[key] ?? key;
    if (name === 'created_at' && isoTimes.has(collection)) next[name] = seconds(value);
    else if (name === 'expires_at' && collection === 'sessions' && key === 'expires') next[name] = Math.ceil((value as number) / 1000);
    else next[name] = value;
  }
  return next;
}

/** A version 2 data file's content (with `version` 2 or 1) as version 3; the object is changed in place. */
export function upgradeData(data: Record<string, unknown>): void {
  for (const [old, name] of Object.entries(collections)) {
    if (old in data) {
      data[name] = data[old];
      delete data[old];
    }
  }
  for (const [name, value] of Object.entries(data)) {
    if (Array.isArray(value)) data[name] = value.map((record: Record<string, unknown>) => upgradeFields(name, record));
  }
  const secrets = data.secrets as Record<string, unknown> | undefined;
  if (secrets && 'sessionKey' in secrets) data.secrets = { session_key: secrets.sessionKey };
  const sequences = data.sequences as Record<string, unknown> | undefined;
  if (sequences && 'personalAccessTokens' in sequences) {
    const { personalAccessTokens, ...rest } = sequences;
    data.sequences = { ...rest, personal_access_tokens: personalAccessTokens };
  }
}

/** A version 2 journal operation as version 3 writes it. */
export function upgradeOp(op: JournalOp): JournalOp {
  const [kind] = op;
  if (kind === 'sequence') return op[1] === 'personalAccessTokens' ? ['sequence', 'personal_access_tokens', op[2]] : op;
  const collection = collectionName(op[1]);
  if (kind === 'insert') return ['insert', collection, upgradeFields(collection, op[2] as Record<string, unknown>)];
  if (kind === 'update') return ['update', collection, op[2], upgradeFields(collection, op[3] as Record<string, unknown>)];
  return ['remove', collection, op[2]];
}

/** Collections added within version 3: a file written before one of them reads as having none of its records. */
export const collectionsAddedInVersion3: readonly string[] = ['notification_events', 'outbox', 'device_grants', 'signing_keys'];

/** Fields added within version 3, by collection, with what a record written before them holds. */
const addedInVersion3: Record<string, Record<string, (record: Record<string, unknown>) => unknown>> = {
  users: { secondary_emails: () => [] },
  // Keys made before the next state signed from their making on.
  signing_keys: { signs_from: (record) => record.created_at },
};

/** The collections that have fields added within version 3. */
export const collectionsWithAddedFields: readonly string[] = Object.keys(addedInVersion3);

/** A record of `collection` with the fields added within version 3 that it lacks; the record itself when it lacks none. */
export function withAddedFields(collection: string, record: unknown): unknown {
  const added = addedInVersion3[collection];
  if (!added || typeof record !== 'object' || record === null || Array.isArray(record)) return record;
  const missing = Object.entries(added).filter(([field]) => !(field in record));
  return missing.length === 0 ? record : { ...record, ...Object.fromEntries(missing.map(([field, value]) => [field, value(record as Record<string, unknown>)])) };
}

/** A journal operation of version 3 whose inserted record has the fields added within version 3. */
export function opWithAddedFields(op: JournalOp): JournalOp {
  return op[0] === 'insert' ? ['insert', op[1], withAddedFields(op[1], op[2])] : op;
}
