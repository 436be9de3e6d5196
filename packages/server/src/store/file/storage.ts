// The JSON file store (store.ts) behind the storage interfaces, one module per aggregate; this only puts them
// together. Every change is one synchronous `commit` callback, which the event loop never interleaves with another:
// checking a name and taking it, or reading a record and writing its next version, cannot be split by a concurrent
// request. That is this store's atomicity, and why uniqueness is checked again inside each commit.
import type { Storage } from '../../domain/storage/index.js';
import { fileApplicationStorage } from './applications.js';
import { fileAuthorizationCodeStorage } from './codes.js';
import { fileDeviceGrantStorage } from './device-grants.js';
import { fileGrantStorage } from './grants.js';
import { fileMailStorage } from './mail.js';
import { fileMaintenanceStorage } from './maintenance.js';
import { fileNamespaceStorage } from './namespaces.js';
import { fileNotificationSettingsStorage } from './notification-settings.js';
import { filePersonalAccessTokenStorage } from './personal-access-tokens.js';
import { fileRecipientStorage } from './recipients.js';
import { fileSessionStorage } from './sessions.js';
import { fileSigningKeyStorage } from './signing-keys.js';
import type { Store } from './store.js';
import { fileTokenStorage } from './tokens.js';
import { fileUserStorage } from './users.js';

export function fileStorage(store: Store): Storage {
  return {
    users: fileUserStorage(store),
    namespaces: fileNamespaceStorage(store),
    applications: fileApplicationStorage(store),
    personalAccessTokens: filePersonalAccessTokenStorage(store),
    codes: fileAuthorizationCodeStorage(store),
    tokens: fileTokenStorage(store),
    grants: fileGrantStorage(store),
    deviceGrants: fileDeviceGrantStorage(store),
    notificationSettings: fileNotificationSettingsStorage(store),
    sessions: fileSessionStorage(store),
    signingKeys: fileSigningKeyStorage(store),
    recipients: fileRecipientStorage(store),
    mail: fileMailStorage(store),
    maintenance: fileMaintenanceStorage(store),
  };
}
