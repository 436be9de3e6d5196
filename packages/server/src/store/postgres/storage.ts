// The storage interfaces on PostgreSQL, for several instances sharing one database: one module per aggregate, put
// together here. What the aggregates share is made once, here: the timed writes (writes.ts), whose one observer
// maintenance sets; and the project lookup recipients start from, namespaces'.
import type pg from 'pg';
import type { Storage } from '../../domain/storage/index.js';
import { postgresApplicationStorage } from './applications.js';
import { postgresAuthorizationCodeStorage } from './codes.js';
import { postgresDeviceGrantStorage } from './device-grants.js';
import { postgresGrantStorage } from './grants.js';
import { postgresMailStorage } from './mail.js';
import { postgresMaintenanceStorage } from './maintenance.js';
import { postgresNamespaceStorage } from './namespaces.js';
import { postgresNotificationSettingsStorage } from './notification-settings.js';
import { postgresPersonalAccessTokenStorage } from './personal-access-tokens.js';
import { postgresRecipientStorage } from './recipients.js';
import { postgresSessionStorage } from './sessions.js';
import { postgresSigningKeyStorage } from './signing-keys.js';
import { postgresTokenStorage } from './tokens.js';
import { postgresUserStorage } from './users.js';
import { timedWrites } from './writes.js';

export interface PostgresStorageOptions {
  /** What the listening line says the data lives in (default `PostgreSQL`). */
  describe?: string;
}

export function postgresStorage(pool: pg.Pool, options: PostgresStorageOptions = {}): Storage {
  const writes = timedWrites(pool);
  const namespaces = postgresNamespaceStorage(pool, writes);
  return {
    users: postgresUserStorage(pool, writes),
    namespaces,
    applications: postgresApplicationStorage(pool, writes),
    personalAccessTokens: postgresPersonalAccessTokenStorage(pool, writes),
    codes: postgresAuthorizationCodeStorage(writes),
    tokens: postgresTokenStorage(pool, writes),
    grants: postgresGrantStorage(pool),
    deviceGrants: postgresDeviceGrantStorage(pool, writes),
    notificationSettings: postgresNotificationSettingsStorage(pool),
    sessions: postgresSessionStorage(pool),
    signingKeys: postgresSigningKeyStorage(pool, writes),
    recipients: postgresRecipientStorage(pool, namespaces.projectById),
    mail: postgresMailStorage(pool, writes),
    maintenance: postgresMaintenanceStorage(pool, writes, options.describe ?? 'PostgreSQL'),
  };
}
