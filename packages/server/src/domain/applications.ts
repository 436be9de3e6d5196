// OAuth client registration (spec 2.1). The App Secret is shown once at registration and stored only as a digest.
import { InputError } from '../explained-error.js';
import { checkScopes } from './oauth/scopes.js';
import type { NewApplicationRow, Storage } from './storage/index.js';
import type { ApplicationRecord, Scope, UserRecord } from './storage/records.js';
import { digest, matchesDigest, newClientId, newSecret } from './secrets.js';
import { epochSeconds } from './time.js';

export const maxRedirectUris = 10;
const maxRedirectUriLength = 2000;
// Schemes that run code or read local data in the browser; a "redirect" there is an attack, never a client.
const forbiddenSchemes = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:', 'filesystem:']);

export interface NewApplication {
  name: string;
  redirect_uris: readonly string[];
  /** Defaults to `['api']`. */
  scopes?: readonly Scope[];
  /** Only for seeds: a fixed App ID instead of a random one. */
  uid?: string;
  /** Only for seeds: a fixed App Secret instead of a random one. */
  secret?: string;
  /** False registers a public client: no secret, PKCE required. Defaults to true, as the service's checkbox. */
  confidential?: boolean;
}

export interface CheckedApplication {
  name: string;
  redirect_uris: string[];
  scopes: Scope[];
  confidential: boolean;
  uid?: string;
  secret?: string;
}

/** Whether the client keeps a secret; records from before the choice existed are confidential. */
export const isConfidential = (application: ApplicationRecord): boolean => application.confidential !== false;

/** Checks an application's fields (not the store); answers them with defaults filled in; throws InputError. */
export function checkApplicationFields(input: NewApplication): CheckedApplication {
  if (typeof input.name !== 'string' || input.name.trim() === '') throw new InputError('name', 'must not be blank');
  if (input.name.length > 255) throw new InputError('name', 'must be at most 255 characters long');
  const redirectUris = checkRedirectUris(input.redirect_uris);
  const scopes = checkScopes(input.scopes ?? ['api']);
  if (input.uid !== undefined && (typeof input.uid !== 'string' || !/^[\x21-\x7e]{1,256}$/.test(input.uid))) {
    throw new InputError('uid', 'must be 1 to 256 printable ASCII characters without spaces');
  }
  if (input.secret !== undefined && (typeof input.secret !== 'string' || !/^[\x21-\x7e]{16,256}$/.test(input.secret))) {
    throw new InputError('secret', 'must be 16 to 256 printable ASCII characters without spaces');
  }
  const confidential = input.confidential ?? true;
  if (typeof confidential !== 'boolean') throw new InputError('confidential', 'must be true or false');
  if (!confidential && input.secret !== undefined) throw new InputError('secret', 'must be absent: a public application has no secret');
  return {
    name: input.name.trim(),
    redirect_uris: redirectUris,
    scopes,
    confidential,
    ...(input.uid === undefined ? {} : { uid: input.uid }),
    ...(input.secret === undefined ? {} : { secret: input.secret }),
  };
}

/** The stored form of a checked application: the secret's digest, never the secret (none for a public client). */
export function newApplicationRow(ownerId: number, input: CheckedApplication, uid: string, secret: string | null): NewApplicationRow {
  return {
    uid,
    secret_digest: secret === null ? null : digest(secret),
    confidential: input.confidential,
    name: input.name,
    redirect_uris: [...input.redirect_uris],
    scopes: [...input.scopes],
    owner_id: ownerId,
    created_at: epochSeconds(),
  };
}

/** Registers an application; the plain App Secret (none for a public client) is answered once here. */
export async function registerApplication(
  storage: Storage,
  ownerId: number,
  input: NewApplication & { confidential?: true },
): Promise<{ record: ApplicationRecord; secret: string }>;
export async function registerApplication(storage: Storage, ownerId: number, input: NewApplication): Promise<{ record: ApplicationRecord; secret: string | null }>;
export async function registerApplication(
  storage: Storage,
  ownerId: number,
  input: NewApplication,
): Promise<{ record: ApplicationRecord; secret: string | null }> {
  const checked = checkApplicationFields(input);
  if (!(await storage.users.byId(ownerId))) throw new InputError('owner', `there is no user ${ownerId}`, 'unknown');
  const uid = checked.uid ?? newClientId();
  const secret = checked.confidential ? (checked.secret ?? newSecret('clientSecret')) : null;
  const record = await storage.applications.create(newApplicationRow(ownerId, checked, uid, secret));
  return { record, secret };
}

/** The application whose App ID (client_id) is `uid`. */
/**
 * Who registered the application, to name on the consent and device pages (as the service does: "This application was
 * created by ..."), so a user can judge whom they are trusting; undefined once that account is gone.
 */
export const applicationOwner = (storage: Storage, application: ApplicationRecord): Promise<UserRecord | undefined> => storage.users.byId(application.owner_id);

export async function findApplicationByUid(storage: Storage, uid: string): Promise<ApplicationRecord | null> {
  return (await storage.applications.byUid(uid)) ?? null;
}

/** The application if `secret` is its App Secret, else null. */
export async function authenticateClient(storage: Storage, uid: string, secret: string): Promise<ApplicationRecord | null> {
  const application = await findApplicationByUid(storage, uid);
  // Compared even for an unknown App ID, so timing does not tell which App IDs exist.
  const matches = matchesDigest(secret, application?.secret_digest);
  return application && matches ? application : null;
}

export function listApplications(storage: Storage, ownerId: number): Promise<ApplicationRecord[]> {
  return storage.applications.ownedBy(ownerId);
}

/**
 * Deletes one of the owner's applications, its pending authorization codes, and revokes every token issued to it
 * (revoked records stay until pruned, so a later use is reported as revoked rather than unknown). False when the
 * owner has no such application.
 */
export function deleteApplication(storage: Storage, ownerId: number, id: number, now: number = epochSeconds()): Promise<boolean> {
  return storage.applications.deleteOwned(ownerId, id, now);
}

/**
 * An application may have no redirect URI at all: a command-line tool on the device flow, or a script on the password
 * grant, never sends a browser back; the authorization endpoint then refuses it, as any unregistered URI.
 */
function checkRedirectUris(value: unknown): string[] {
  if (!Array.isArray(value)) throw new InputError('redirect_uris', 'must be a list of redirect URIs');
  const unique = [...new Set(value as unknown[])];
  if (unique.length > maxRedirectUris) {
    throw new InputError('redirect_uris', `must list at most ${maxRedirectUris} redirect URIs`);
  }
  for (const uri of unique) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new InputError('redirect_uris', `${JSON.stringify(uri)} ${problem}`);
  }
  return unique as string[];
}

function redirectUriProblem(uri: unknown): string | null {
  if (typeof uri !== 'string' || uri === '') return 'is not a URI';
  if (uri.length > maxRedirectUriLength) return `is longer than ${maxRedirectUriLength} characters`;
  if (/\s/.test(uri)) return 'contains white space';
  // RFC 6749 section 3.1.2: no fragment. Checked on the text, since URL drops an empty "#".
  if (uri.includes('#')) return 'must not contain a fragment (#)';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URI';
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    return url.hostname === '' ? 'has no host' : null;
  }
  // Native apps use private-use schemes such as com.example.app:/cb (RFC 8252 section 7.1).
  if (forbiddenSchemes.has(url.protocol)) return `uses the forbidden scheme ${url.protocol}`;
  return null;
}

