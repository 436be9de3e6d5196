// Everything the domain asks of storage: its ports, one interface per aggregate in a module of its own, each method
// named for the question it answers. The stores (store/) implement them: the JSON file (the zero-setup default), and
// PostgreSQL for several instances on one database. Every method is async and takes and answers plain values: no
// predicate, array or index of either store crosses this line. A name that must be unique (username, e-mail address,
// group path, project path, App ID, digest) is refused by the store itself with an InputError (`taken`), so two
// instances racing for one name cannot both win.
import type { ApplicationStorage } from './applications.js';
import type { DeviceGrantStorage } from './device-grants.js';
import type { GrantStorage } from './grants.js';
import type { MailStorage } from './mail.js';
import type { MaintenanceStorage } from './maintenance.js';
import type { NamespaceStorage } from './namespaces.js';
import type { NotificationSettingsStorage } from './notification-settings.js';
import type { RecipientStorage } from './recipients.js';
import type { SessionStorage } from './sessions.js';
import type { SigningKeyStorage } from './signing-keys.js';
import type { AuthorizationCodeStorage, PersonalAccessTokenStorage, TokenStorage } from './tokens.js';
import type { UserStorage } from './users.js';

export type * from './applications.js';
export type * from './device-grants.js';
export type * from './grants.js';
export type * from './mail.js';
export type * from './maintenance.js';
export { nameKeys } from './maintenance.js';
export type * from './namespaces.js';
export * from './notification-settings.js';
export type * from './recipients.js';
export type * from './records.js';
export type * from './sessions.js';
export type * from './signing-keys.js';
export * from './refusals.js';
export * from './throttle.js';
export type * from './tokens.js';
export * from './unavailable.js';
export type * from './users.js';

export interface Storage {
  users: UserStorage;
  namespaces: NamespaceStorage;
  applications: ApplicationStorage;
  personalAccessTokens: PersonalAccessTokenStorage;
  codes: AuthorizationCodeStorage;
  tokens: TokenStorage;
  grants: GrantStorage;
  deviceGrants: DeviceGrantStorage;
  notificationSettings: NotificationSettingsStorage;
  recipients: RecipientStorage;
  sessions: SessionStorage;
  signingKeys: SigningKeyStorage;
  mail: MailStorage;
  maintenance: MaintenanceStorage;
}
