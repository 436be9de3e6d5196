// A fixture checked against itself and the store, every problem found at once, and the rows it will write.
import { checkNewUserFields, checkPersonalAccessTokenFields, newPersonalAccessTokenRow, newUserRow, type CheckedPersonalAccessToken } from '../accounts.js';
import { checkApplicationFields, newApplicationRow, type CheckedApplication } from '../applications.js';
import { accessLevels, checkNamespaceEntryFields } from '../namespaces.js';
import { checkPasswordHash, checkPasswordPolicy } from '../passwords.js';
import { digest } from '../secrets.js';
import { epochSeconds } from '../time.js';
import { InputError } from '../../explained-error.js';
import type { Scope, UserRecord, Visibility } from '../storage/records.js';
import { nameKeys, type FoundNames, type Group, type Project, type NameQuery, type SeedRows } from '../storage/index.js';
import type { SeedFixture, SeedGroup, SeedPersonalAccessToken, SeedProject, SeedUser } from './fixture.js';
import { conflict, differences, noStoredEntries, type StoredEntries } from './existing.js';

/** Usernames, addresses and paths compare whatever the case, as the stores key the names they found (nameKeys). */
const fold = nameKeys.usernames;

const entryKeys = {
  top: ['users', 'groups', 'projects', 'applications'],
  user: ['username', 'email', 'secondary_emails', 'name', 'password', 'password_hash', 'two_factor_enabled', 'otp_secret', 'is_admin', 'bio', 'personal_access_tokens'],
  token: ['name', 'token', 'scopes', 'expires_at'],
  group: ['path', 'name', 'visibility', 'members'],
  project: ['namespace', 'path', 'name', 'visibility', 'members'],
  member: ['username', 'access_level'],
  application: ['name', 'owner', 'client_id', 'client_secret', 'redirect_uris', 'scopes', 'confidential'],
};

/** What a checked fixture will insert, in order. */
interface Plan {
  users: Array<{ user: SeedUser; tokens: CheckedPersonalAccessToken[] }>;
  groups: SeedGroup[];
  projects: Array<{ project: SeedProject; namespace: string }>;
  applications: Array<{ owner: string; application: CheckedApplication }>;
  /** Entries the store has already, identical: skipped. */
  unchanged: number;
}

/** What the checks of one fixture share: the store, the problems found, the plan so far, and the names it adds. */
interface Planning {
  /** The fixture's names the store has already. */
  existing: FoundNames;
  /** The store's records under those names, to tell an entry loaded before from a conflicting one. */
  stored: StoredEntries;
  problems: string[];
  result: Plan;
  /** Runs a check of the entry at `path`; a refused field becomes a problem naming it, and the answer is false. */
  at: (path: string, check: () => void) => boolean;
  // Case-folded names the fixture adds, to catch duplicates within it as well as against the store.
  usernames: Map<string, string>;
  /** Primary and secondary addresses alike: an address belongs to one user. */
  emails: Set<string>;
  tokenDigests: Set<string>;
  groupPaths: Map<string, string>;
  fullPaths: Set<string>;
  clientIds: Set<string>;
  userExists: (name: string) => boolean;
  checkMembers: (value: unknown) => void;
}

/**
 * Checks the whole fixture against itself and the store; answers the plan and every problem found. An entry the store
 * has already is skipped when identical and a problem when not (existing.ts).
 */
export function plan(existing: FoundNames, fixture: unknown, stored: StoredEntries = noStoredEntries()): { plan: Plan; problems: string[] } {
  const problems: string[] = [];
  const result: Plan = { users: [], groups: [], projects: [], applications: [], unchanged: 0 };
  const at = (path: string, check: () => void): boolean => {
    try {
      check();
      return true;
    } catch (error) {
      const where = (field: string) => [path, field].filter(Boolean).join('.');
      if (!(error instanceof InputError)) throw error;
      problems.push(`${where(error.field)}: ${error.message}`);
      return false;
    }
  };

  if (!isObject(fixture)) return { plan: result, problems: ['the fixture must be a JSON object'] };
  at('', () => unknownKeys(fixture, entryKeys.top));
  const list = (name: keyof SeedFixture): Record<string, unknown>[] => {
    const value = fixture[name];
    if (value === undefined) return [];
    if (!Array.isArray(value)) {
      problems.push(`${name}: must be an array`);
      return [];
    }
    return value.map((entry, i) => {
      if (isObject(entry)) return entry;
      problems.push(`${name}[${i}]: must be an object`);
      return null;
    }).filter((e): e is Record<string, unknown> => e !== null);
  };

  const usernames = new Map<string, string>();
  const userExists = (name: string) => usernames.has(fold(name)) || existing.usernames.has(fold(name));
  const planning: Planning = {
    existing,
    stored,
    problems,
    result,
    at,
    usernames,
    emails: new Set(),
    tokenDigests: new Set(),
    groupPaths: new Map(),
    fullPaths: new Set(),
    clientIds: new Set(),
    userExists,
    checkMembers: (value) => checkMembers(value, userExists),
  };
  list('users').forEach((user, i) => planUser(planning, user, i));
  list('groups').forEach((group, i) => planGroup(planning, group, i));
  list('projects').forEach((project, i) => planProject(planning, project, i));
  list('applications').forEach((application, i) => planApplication(planning, application, i));
  return { plan: result, problems };
}

/** A group's or project's members: existing users, each once, with a known access level. */
function checkMembers(value: unknown, userExists: (name: string) => boolean): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) throw new InputError('members', 'must be an array');
  const seen = new Set<string>();
  value.forEach((member: unknown, j) => {
    if (!isObject(member)) throw new InputError(`members[${j}]`, 'must be an object');
    unknownKeys(member, entryKeys.member, `members[${j}].`);
    const username = member.username;
    if (typeof username !== 'string' || !userExists(username)) {
      throw new InputError(`members[${j}].username`, `${JSON.stringify(username)} is not a user of the fixture or the store`, 'unknown');
    }
    if (seen.has(fold(username))) throw new InputError(`members[${j}].username`, `${username} is listed twice`, 'taken');
    seen.add(fold(username));
    if (!accessLevels.has(member.access_level as number)) {
      throw new InputError(`members[${j}].access_level`, 'must be 10, 20, 30, 40 or 50');
    }
  });
}

function planUser(planning: Planning, user: Record<string, unknown>, i: number): void {
  const { existing, problems, result, at, usernames, emails, tokenDigests } = planning;
  const path = `users[${i}]`;
  const seedUser = user as unknown as SeedUser;
  const tokens: CheckedPersonalAccessToken[] = [];
  const known = at(path, () => unknownKeys(user, entryKeys.user));
  const fields = at(path, () => checkNewUserFields(user as unknown as SeedUser));
  const password = at(path, () => {
    if (user.password_hash === undefined) {
      if (typeof user.password !== 'string') throw new InputError('password', 'must be a string (or give password_hash instead)');
      return checkPasswordPolicy(user.password);
    }
    if (user.password !== undefined) throw new InputError('password_hash', 'give password or password_hash, not both');
    checkPasswordHash(user.password_hash);
  });
  // Uniqueness only means something once the names are well-formed strings.
  const stored = fields ? planning.stored.users.get(fold(seedUser.username)) : undefined;
  // What an operator changes later with `tokenbell users` (password, blocked, admin, two-factor) is the store's to
  // keep: only what names and describes the user must match.
  const same = (record: UserRecord) => {
    const changed = differences(newUserRow(seedUser, record.password_hash), record, ['username', 'email', 'secondary_emails', 'name', 'bio']);
    if (changed.length > 0) throw new InputError('', conflict(`the user ${JSON.stringify(record.username)}`, changed), 'taken');
  };
  const unique =
    fields &&
    at(path, () => {
      if (stored) return same(stored.user);
      const { username, email } = user as unknown as SeedUser;
      if (usernames.has(fold(username)) || existing.usernames.has(fold(username))) {
        throw new InputError('username', `the username ${JSON.stringify(username)} is already taken`, 'taken');
      }
      if (existing.groupPaths.has(fold(username))) {
        throw new InputError('username', `the username ${JSON.stringify(username)} is already a group's path`, 'taken');
      }
      const inUse = (address: string) => emails.has(fold(address)) || existing.emails.has(fold(address));
      if (inUse(email)) throw new InputError('email', `the e-mail address ${JSON.stringify(email)} is already in use`, 'taken');
      (user.secondary_emails as string[] | undefined)?.forEach((address, j) => {
        if (inUse(address)) throw new InputError(`secondary_emails[${j}]`, `the e-mail address ${JSON.stringify(address)} is already in use`, 'taken');
      });
    });
  const ok = known && fields && password && unique;
  const pats = user.personal_access_tokens;
  if (pats !== undefined && !Array.isArray(pats)) problems.push(`${path}.personal_access_tokens: must be an array`);
  (Array.isArray(pats) ? pats : []).forEach((pat: unknown, j) => {
    const tokenPath = `${path}.personal_access_tokens[${j}]`;
    at(tokenPath, () => {
      if (!isObject(pat)) throw new InputError('', 'must be an object');
      unknownKeys(pat, entryKeys.token);
      if (typeof pat.token !== 'string') throw new InputError('token', 'must be a string');
      const checked = checkPersonalAccessTokenFields(pat as unknown as SeedPersonalAccessToken, { is_admin: user.is_admin === true });
      const d = digest(pat.token);
      const own = stored?.tokens.find((t) => t.token_digest === d);
      if (tokenDigests.has(d) || (existing.tokenDigests.has(d) && !own)) {
        throw new InputError('token', 'this token is already in use', 'taken');
      }
      if (stored && !own) throw new InputError('', `the user ${JSON.stringify(stored.user.username)} is already in the store without this token`, 'taken');
      if (own) {
        // Revoked or not, as its user left it.
        const changed = differences(newPersonalAccessTokenRow(own.user_id, checked, pat.token), own, ['name', 'scopes', 'expires_at'], ['scopes']);
        if (changed.length > 0) throw new InputError('', conflict(`the token ${JSON.stringify(own.name)}`, changed), 'taken');
      }
      tokenDigests.add(d);
      tokens.push(checked);
    });
  });
  if (ok) {
    usernames.set(fold(seedUser.username), stored?.user.username ?? seedUser.username);
    for (const address of [seedUser.email, ...(seedUser.secondary_emails ?? [])]) emails.add(fold(address));
    if (stored) result.unchanged++;
    else result.users.push({ user: seedUser, tokens });
  }
}

function planGroup(planning: Planning, group: Record<string, unknown>, i: number): void {
  const { existing, result, at, groupPaths, userExists, checkMembers } = planning;
  const found: { stored?: Group } = {};
  const ok = at(`groups[${i}]`, () => {
    unknownKeys(group, entryKeys.group);
    const { path } = checkNamespaceEntryFields(group);
    const stored = groupPaths.has(fold(path)) ? undefined : planning.stored.groups.get(fold(path));
    if (stored) {
      found.stored = stored;
      sameNamespaceEntry(`the group ${JSON.stringify(stored.path)}`, group, stored);
      checkMembers(group.members);
      return;
    }
    if (groupPaths.has(fold(path)) || existing.groupPaths.has(fold(path))) {
      throw new InputError('path', `the group ${JSON.stringify(path)} already exists`, 'taken');
    }
    if (userExists(path)) throw new InputError('path', `${JSON.stringify(path)} is already a username`, 'taken');
    checkMembers(group.members);
  });
  if (ok) {
    groupPaths.set(fold(group.path as string), found.stored?.path ?? (group.path as string));
    if (found.stored) result.unchanged++;
    else result.groups.push(group as unknown as SeedGroup);
  }
}

function planProject(planning: Planning, project: Record<string, unknown>, i: number): void {
  const { existing, result, at, usernames, groupPaths, fullPaths, checkMembers } = planning;
  at(`projects[${i}]`, () => {
    unknownKeys(project, entryKeys.project);
    const { namespace } = project;
    if (typeof namespace !== 'string') throw new InputError('namespace', 'must be a group path or a username');
    const groupPath = groupPaths.get(fold(namespace)) ?? existing.groupPaths.get(fold(namespace)) ?? null;
    const owner = groupPath ?? usernames.get(fold(namespace)) ?? existing.usernames.get(fold(namespace));
    if (owner === undefined) {
      throw new InputError('namespace', `${JSON.stringify(namespace)} is neither a group's path nor a username`, 'unknown');
    }
    const { path } = checkNamespaceEntryFields(project);
    const fullPath = `${owner}/${path}`;
    const stored = fullPaths.has(fold(fullPath)) ? undefined : planning.stored.projects.get(fold(fullPath));
    if (stored) {
      sameNamespaceEntry(`the project ${JSON.stringify(`${stored.namespace}/${stored.path}`)}`, project, stored);
      checkMembers(project.members);
      fullPaths.add(fold(fullPath));
      result.unchanged++;
      return;
    }
    if (fullPaths.has(fold(fullPath)) || existing.projectPaths.has(fold(fullPath))) {
      throw new InputError('path', `the project ${JSON.stringify(fullPath)} already exists`, 'taken');
    }
    checkMembers(project.members);
    fullPaths.add(fold(fullPath));
    result.projects.push({ project: project as unknown as SeedProject, namespace: owner });
  });
}

function planApplication(planning: Planning, application: Record<string, unknown>, i: number): void {
  const { existing, result, at, clientIds, userExists } = planning;
  const path = `applications[${i}]`;
  at(path, () => {
    unknownKeys(application, entryKeys.application);
    const { owner, client_id, client_secret, confidential } = application;
    if (typeof owner !== 'string' || !userExists(owner)) {
      throw new InputError('owner', `${JSON.stringify(owner)} is not a user of the fixture or the store`, 'unknown');
    }
    if (typeof client_id !== 'string') throw new InputError('client_id', 'must be a string');
    if (confidential !== false && typeof client_secret !== 'string') throw new InputError('client_secret', 'must be a string');
    let checked: CheckedApplication;
    try {
      checked = checkApplicationFields({
        name: application.name as string,
        redirect_uris: application.redirect_uris as string[],
        scopes: application.scopes as Scope[] | undefined,
        uid: client_id,
        ...(client_secret === undefined ? {} : { secret: client_secret as string }),
        ...(confidential === undefined ? {} : { confidential: confidential as boolean }),
      });
    } catch (error) {
      // The fixture names these as the token endpoint does.
      if (error instanceof InputError && (error.field === 'uid' || error.field === 'secret')) {
        throw new InputError(error.field === 'uid' ? 'client_id' : 'client_secret', error.message, error.code);
      }
      throw error;
    }
    const stored = clientIds.has(client_id) ? undefined : planning.stored.applications.get(client_id);
    if (stored) {
      const wanted = newApplicationRow(stored.application.owner_id, checked, client_id, checked.secret ?? null);
      const changed = differences(wanted, stored.application, ['name', 'redirect_uris', 'scopes', 'confidential', 'secret_digest'], ['scopes']).map((f) =>
        f === 'secret_digest' ? 'client_secret' : f,
      );
      if (fold(owner) !== fold(stored.owner ?? '')) changed.push('owner');
      if (changed.length > 0) throw new InputError('', conflict(`the application ${JSON.stringify(client_id)}`, changed), 'taken');
      clientIds.add(client_id);
      result.unchanged++;
      return;
    }
    if (clientIds.has(client_id) || existing.clientIds.has(client_id)) {
      throw new InputError('client_id', `the App ID ${JSON.stringify(client_id)} is already taken`, 'taken');
    }
    clientIds.add(client_id);
    result.applications.push({ owner, application: checked });
  });
}

/** The names a fixture would add, to ask the store which it has already. */
export function namesIn(fixture: unknown): NameQuery {
  const query: NameQuery = { usernames: [], emails: [], groupPaths: [], projectPaths: [], clientIds: [], tokenDigests: [] };
  if (!isObject(fixture)) return query;
  const entries = (name: string) => (Array.isArray(fixture[name]) ? (fixture[name] as unknown[]).filter(isObject) : []);
  const text = (value: unknown, into: string[]) => {
    if (typeof value === 'string') into.push(value);
  };
  for (const user of entries('users')) {
    text(user.username, query.usernames);
    text(user.email, query.emails);
    for (const address of Array.isArray(user.secondary_emails) ? user.secondary_emails : []) text(address, query.emails);
    // A username may not be a group's path either.
    text(user.username, query.groupPaths);
    for (const token of Array.isArray(user.personal_access_tokens) ? user.personal_access_tokens : []) {
      if (isObject(token) && typeof token.token === 'string') query.tokenDigests.push(digest(token.token));
    }
  }
  for (const group of entries('groups')) {
    text(group.path, query.groupPaths);
    text(group.path, query.usernames);
    for (const m of Array.isArray(group.members) ? group.members : []) if (isObject(m)) text(m.username, query.usernames);
  }
  for (const project of entries('projects')) {
    text(project.namespace, query.groupPaths);
    text(project.namespace, query.usernames);
    if (typeof project.namespace === 'string' && typeof project.path === 'string') query.projectPaths.push(`${project.namespace}/${project.path}`);
    for (const m of Array.isArray(project.members) ? project.members : []) if (isObject(m)) text(m.username, query.usernames);
  }
  for (const application of entries('applications')) {
    text(application.owner, query.usernames);
    text(application.client_id, query.clientIds);
  }
  return query;
}

/** The stored rows of a checked plan, its passwords hashed. */
export function rowsOf(steps: Plan, hashes: string[]): SeedRows {
  const now = epochSeconds();
  const entry = (e: { path: string; name: string; visibility: Visibility }) => ({ path: e.path, name: e.name.trim(), visibility: e.visibility, created_at: now });
  return {
    users: steps.users.map(({ user, tokens }, i) => ({
      user: newUserRow(user, hashes[i]!),
      tokens: tokens.map((token) => {
        const { user_id: _, ...row } = newPersonalAccessTokenRow(0, token, token.token!);
        return row;
      }),
    })),
    groups: steps.groups.map((group) => ({ group: entry(group), members: group.members ?? [] })),
    projects: steps.projects.map(({ project, namespace }) => ({ project: { ...entry(project), namespace }, members: project.members ?? [] })),
    applications: steps.applications.map(({ owner, application }) => {
      const { owner_id: _, ...row } = newApplicationRow(0, application, application.uid!, application.secret ?? null);
      return { owner, application: row };
    }),
  };
}


/**
 * Throws the conflict of a group or project the store has with another name or visibility. Its members are not
 * compared: after seeding they are the instance's (a member added, or one deleted with `tokenbell users delete`).
 */
function sameNamespaceEntry(what: string, entry: Record<string, unknown>, stored: Group | Project): void {
  const wanted: Pick<Group, 'name' | 'visibility'> = { name: (entry.name as string).trim(), visibility: entry.visibility as Visibility };
  const changed = differences(wanted, stored, ['name', 'visibility']);
  if (changed.length > 0) throw new InputError('', conflict(what, changed), 'taken');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unknownKeys(entry: Record<string, unknown>, known: string[], prefix = ''): void {
  const extra = Object.keys(entry).filter((k) => !known.includes(k));
  if (extra.length > 0) {
    throw new InputError(`${prefix}${extra[0]}`, `unknown field; expected one of ${known.join(', ')}`);
  }
}

