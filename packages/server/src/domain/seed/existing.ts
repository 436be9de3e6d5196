// A fixture loaded again (every start of a container with the same --seed): the store's own records of the fixture's
// names, and what differs between each and the record the fixture would write. An entry identical to the store's is
// skipped; one that differs is refused by name, so a restart never loops and never silently rewrites an entry.
import type { FoundNames, Group, Project, Storage } from '../storage/index.js';
import type { ApplicationRecord, PersonalAccessTokenRecord, UserRecord } from '../storage/records.js';

/** The records the store has under a fixture's names, each by its lower-cased name (an application by its App ID). */
export interface StoredEntries {
  users: Map<string, { user: UserRecord; tokens: PersonalAccessTokenRecord[] }>;
  groups: Map<string, Group>;
  /** By `namespace/path`. */
  projects: Map<string, Project>;
  applications: Map<string, { application: ApplicationRecord; owner: string | undefined }>;
}

export const noStoredEntries = (): StoredEntries => ({ users: new Map(), groups: new Map(), projects: new Map(), applications: new Map() });

/** The stored records behind the names `existingNames` found, through the ports every other caller uses. */
export async function storedEntries(storage: Storage, found: FoundNames): Promise<StoredEntries> {
  const entries = noStoredEntries();
  for (const [folded, username] of found.usernames) {
    const user = await storage.users.byUsername(username);
    if (user) entries.users.set(folded, { user, tokens: await storage.personalAccessTokens.ofUser(user.id) });
  }
  for (const [folded, path] of found.groupPaths) {
    const group = await storage.namespaces.groupByPath(path);
    if (group) entries.groups.set(folded, group);
  }
  for (const [folded, fullPath] of found.projectPaths) {
    const project = await storage.namespaces.projectByFullPath(fullPath);
    if (project) entries.projects.set(folded, project);
  }
  for (const [uid] of found.clientIds) {
    const application = await storage.applications.byUid(uid);
    if (application) entries.applications.set(uid, { application, owner: (await storage.users.byId(application.owner_id))?.username });
  }
  return entries;
}

/**
 * The fields of `wanted` (the row the fixture would write) whose value `stored` does not have; lists compare in
 * order unless named in `unordered` (scopes are a set).
 */
export function differences<T extends object>(wanted: T, stored: T, fields: readonly (keyof T & string)[], unordered: readonly (keyof T & string)[] = []): string[] {
  const canonical = (field: keyof T & string, value: unknown) =>
    JSON.stringify(Array.isArray(value) && unordered.includes(field) ? [...value].sort() : (value ?? null));
  return fields.filter((field) => canonical(field, wanted[field]) !== canonical(field, stored[field]));
}

/** `entry: the user "x" is already in the store with another email, name`: one line naming the entry and the fields. */
export function conflict(what: string, fields: readonly string[]): string {
  return `${what} is already in the store with another ${fields.join(', ')}`;
}
