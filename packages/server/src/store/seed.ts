// Seed fixtures: a whole set of users, groups, projects and applications, checked completely before anything is
// written, then applied in one commit so a bad fixture never leaves a half-seeded store.
import { readFile } from 'node:fs/promises';
import { customAlphabet } from 'nanoid';
import {
  checkNewUserFields,
  checkPersonalAccessTokenFields,
  insertPersonalAccessToken,
  insertUser,
  type CheckedPersonalAccessToken,
  type NewUser,
} from '../domain/accounts.js';
import { checkApplicationFields, insertApplication, type CheckedApplication } from '../domain/applications.js';
import { accessLevels, checkNamespaceEntryFields, insertGroup, insertProject } from '../domain/namespaces.js';
import { checkPasswordPolicy, hashPassword } from '../domain/passwords.js';
import { digest, newClientId, newSecret } from '../domain/secrets.js';
import { ExplainedError, InputError } from '../explained-error.js';
import type { Store } from './file-store.js';
import type { Membership, Scope, Visibility } from './schema.js';

/**
 * A seed fixture (JSON). Every list is optional; names are matched case-insensitively, as at sign-in.
 *
 * ```json
 * {
 *   "users": [{
 *     "username": "jsmith", "email": "jsmith@example.com", "name": "Jane Smith", "password": "at least 8 chars",
 *     "two_factor_enabled": false, "otp_secret": "base32, with two_factor_enabled", "is_admin": false, "bio": "optional",
 *     "personal_access_tokens": [{ "name": "laptop", "token": "tbpat-...", "scopes": ["api"], "expires_at": "2030-12-31" }]
 *   }],
 *   "groups": [{
 *     "path": "acme", "name": "Acme", "visibility": "private",
 *     "members": [{ "username": "jsmith", "access_level": 50 }]
 *   }],
 *   "projects": [{
 *     "namespace": "acme", "path": "widgets", "name": "Widgets", "visibility": "private",
 *     "members": [{ "username": "awong", "access_level": 30 }]
 *   }],
 *   "applications": [{
 *     "name": "Example App", "owner": "jsmith", "client_id": "...", "client_secret": "...",
 *     "redirect_uris": ["http://127.0.0.1:8080/callback"], "scopes": ["api", "read_user"]
 *   }]
 * }
 * ```
 *
 * - Usernames and e-mail addresses are unique; a group's path must not be a username (a project's namespace is
 *   one or the other).
 * - `access_level`: 10 guest, 20 reporter, 30 developer, 40 maintainer, 50 owner. Members name users of the
 *   fixture or already in the store.
 * - A project whose `namespace` is a group's path belongs to that group; otherwise `namespace` must be a username
 *   (the project lives in that user's namespace). `members` is optional.
 * - A user with `two_factor_enabled` signs in to the pages with a code from an authenticator app holding
 *   `otp_secret` (TOTP, SHA-1, 6 digits, 30 s); without one, such a user cannot sign in to the pages at all.
 * - An application with `"confidential": false` is a public client (a browser or native app): it has no
 *   `client_secret` and must use PKCE.
 * - Plain secrets (passwords, tokens, client secrets) are only in the fixture: the store keeps scrypt hashes and
 *   SHA-256 digests. `expires_at` is the token's last valid day (UTC); `scopes` default to `["api"]`.
 */
export interface SeedFixture {
  users?: SeedUser[];
  groups?: SeedGroup[];
  projects?: SeedProject[];
  applications?: SeedApplication[];
}

/** A new user's fields (accounts.ts) and the personal access tokens to give them. */
export interface SeedUser extends NewUser {
  personal_access_tokens?: SeedPersonalAccessToken[];
}

export interface SeedPersonalAccessToken {
  name: string;
  token: string;
  scopes?: Scope[];
  expires_at?: string | null;
}

export interface SeedMember {
  username: string;
  access_level: number;
}

export interface SeedGroup {
  path: string;
  name: string;
  visibility: Visibility;
  members?: SeedMember[];
}

export interface SeedProject {
  namespace: string;
  path: string;
  name: string;
  visibility: Visibility;
  members?: SeedMember[];
}

export interface SeedApplication {
  name: string;
  owner: string;
  client_id: string;
  /** Absent, and only absent, for a public client. */
  client_secret?: string;
  redirect_uris: string[];
  scopes?: Scope[];
  /** False for a public client (a browser or native app): no secret, PKCE required. Defaults to true. */
  confidential?: boolean;
}

/** A fixture that cannot be loaded; `problems` lists every bad entry, e.g. `users[2].email: ...`. */
export class SeedError extends ExplainedError {
  override name = 'SeedError';
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`the seed fixture was not loaded:\n${problems.map((p) => `  ${p}`).join('\n')}`);
    this.problems = problems;
  }
}

export interface SeedSummary {
  users: number;
  personalAccessTokens: number;
  groups: number;
  projects: number;
  applications: number;
}

const entryKeys = {
  top: ['users', 'groups', 'projects', 'applications'],
  user: ['username', 'email', 'name', 'password', 'two_factor_enabled', 'otp_secret', 'is_admin', 'bio', 'personal_access_tokens'],
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
}

/** What the checks of one fixture share: the store, the problems found, the plan so far, and the names it adds. */
interface Planning {
  store: Store;
  problems: string[];
  result: Plan;
  /** Runs a check of the entry at `path`; a refused field becomes a problem naming it, and the answer is false. */
  at: (path: string, check: () => void) => boolean;
  // Case-folded names the fixture adds, to catch duplicates within it as well as against the store.
  usernames: Map<string, string>;
  emails: Set<string>;
  tokenDigests: Set<string>;
  groupPaths: Map<string, string>;
  fullPaths: Set<string>;
  clientIds: Set<string>;
  userExists: (name: string) => boolean;
  checkMembers: (value: unknown) => void;
}

/** Checks the whole fixture against itself and the store; answers the plan and every problem found. */
function plan(store: Store, fixture: unknown): { plan: Plan; problems: string[] } {
  const problems: string[] = [];
  const result: Plan = { users: [], groups: [], projects: [], applications: [] };
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
  const userExists = (name: string) => usernames.has(fold(name)) || store.lookup('users', 'username', name) !== undefined;
  const planning: Planning = {
    store,
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
  const { store, problems, result, at, usernames, emails, tokenDigests } = planning;
  const path = `users[${i}]`;
  const tokens: CheckedPersonalAccessToken[] = [];
  const known = at(path, () => unknownKeys(user, entryKeys.user));
  const fields = at(path, () => checkNewUserFields(user as unknown as SeedUser));
  const password = at(path, () => {
    if (typeof user.password !== 'string') throw new InputError('password', 'must be a string');
    checkPasswordPolicy(user.password);
  });
  // Uniqueness only means something once the names are well-formed strings.
  const unique =
    fields &&
    at(path, () => {
      const { username, email } = user as unknown as SeedUser;
      if (usernames.has(fold(username)) || store.lookup('users', 'username', username)) {
        throw new InputError('username', `the username ${JSON.stringify(username)} is already taken`, 'taken');
      }
      if (store.lookup('groups', 'path', username)) {
        throw new InputError('username', `the username ${JSON.stringify(username)} is already a group's path`, 'taken');
      }
      if (emails.has(fold(email)) || store.lookup('users', 'email', email)) {
        throw new InputError('email', `the e-mail address ${JSON.stringify(email)} is already in use`, 'taken');
      }
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
      const checked = checkPersonalAccessTokenFields(pat as unknown as SeedPersonalAccessToken);
      const d = digest(pat.token);
      if (tokenDigests.has(d) || store.lookup('personalAccessTokens', 'tokenDigest', d)) {
        throw new InputError('token', 'this token is already in use', 'taken');
      }
      tokenDigests.add(d);
      tokens.push(checked);
    });
  });
  if (ok) {
    const seedUser = user as unknown as SeedUser;
    usernames.set(fold(seedUser.username), seedUser.username);
    emails.add(fold(seedUser.email));
    result.users.push({ user: seedUser, tokens });
  }
}

function planGroup(planning: Planning, group: Record<string, unknown>, i: number): void {
  const { store, result, at, groupPaths, userExists, checkMembers } = planning;
  const ok = at(`groups[${i}]`, () => {
    unknownKeys(group, entryKeys.group);
    const { path } = checkNamespaceEntryFields(group);
    // Against the fixture as well as the store: insertGroup sees only the store.
    if (groupPaths.has(fold(path)) || store.lookup('groups', 'path', path)) {
      throw new InputError('path', `the group ${JSON.stringify(path)} already exists`, 'taken');
    }
    if (userExists(path)) throw new InputError('path', `${JSON.stringify(path)} is already a username`, 'taken');
    checkMembers(group.members);
  });
  if (ok) {
    groupPaths.set(fold(group.path as string), group.path as string);
    result.groups.push(group as unknown as SeedGroup);
  }
}

function planProject(planning: Planning, project: Record<string, unknown>, i: number): void {
  const { store, result, at, usernames, groupPaths, fullPaths, checkMembers } = planning;
  at(`projects[${i}]`, () => {
    unknownKeys(project, entryKeys.project);
    const { namespace } = project;
    if (typeof namespace !== 'string') throw new InputError('namespace', 'must be a group path or a username');
    const groupPath = groupPaths.get(fold(namespace)) ?? store.lookup('groups', 'path', namespace)?.path ?? null;
    const owner = groupPath ?? usernames.get(fold(namespace)) ?? store.lookup('users', 'username', namespace)?.username;
    if (owner === undefined) {
      throw new InputError('namespace', `${JSON.stringify(namespace)} is neither a group's path nor a username`, 'unknown');
    }
    const { path } = checkNamespaceEntryFields(project);
    const fullPath = `${owner}/${path}`;
    if (fullPaths.has(fold(fullPath)) || store.lookup('projects', 'fullPath', fullPath)) {
      throw new InputError('path', `the project ${JSON.stringify(fullPath)} already exists`, 'taken');
    }
    checkMembers(project.members);
    fullPaths.add(fold(fullPath));
    result.projects.push({ project: project as unknown as SeedProject, namespace: owner });
  });
}

function planApplication(planning: Planning, application: Record<string, unknown>, i: number): void {
  const { store, result, at, clientIds, userExists } = planning;
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
    if (clientIds.has(client_id) || store.lookup('applications', 'uid', client_id)) {
      throw new InputError('client_id', `the App ID ${JSON.stringify(client_id)} is already taken`, 'taken');
    }
    clientIds.add(client_id);
    result.applications.push({ owner, application: checked });
  });
}

/**
 * Loads a fixture (see SeedFixture): checks all of it first and throws SeedError listing every problem without
 * writing anything, then hashes the passwords and applies everything in one commit.
 */
export async function loadSeed(store: Store, fixture: unknown): Promise<SeedSummary> {
  const first = plan(store, fixture);
  if (first.problems.length > 0) throw new SeedError(first.problems);
  const hashes = await Promise.all(first.plan.users.map(({ user }) => hashPassword(user.password)));
  return store.commit(() => {
    // Hashing awaited, so another request may have taken a name meanwhile; checked again before any change.
    const { plan: steps, problems } = plan(store, fixture);
    if (problems.length > 0) throw new SeedError(problems);
    const userId = (username: string) => store.lookup('users', 'username', username)!.id;
    const members = (list: SeedMember[] | undefined): Membership[] =>
      (list ?? []).map((m) => ({ user_id: userId(m.username), access_level: m.access_level }));
    const now = new Date().toISOString();
    let personalAccessTokens = 0;

    steps.users.forEach(({ user, tokens }, i) => {
      const record = insertUser(store, user, hashes[i]!);
      for (const token of tokens) {
        insertPersonalAccessToken(store, record.id, token, token.token!);
        personalAccessTokens += 1;
      }
    });
    for (const group of steps.groups) insertGroup(store, group, members(group.members), now);
    for (const { project, namespace } of steps.projects) insertProject(store, namespace, project, members(project.members), now);
    for (const { owner, application } of steps.applications) {
      insertApplication(store, userId(owner), application, application.uid!, application.secret ?? null);
    }
    return {
      users: steps.users.length,
      personalAccessTokens,
      groups: steps.groups.length,
      projects: steps.projects.length,
      applications: steps.applications.length,
    };
  });
}

/** Reads a JSON fixture file and loads it; errors name the file. */
export async function loadSeedFile(store: Store, file: string): Promise<SeedSummary> {
  let fixture: unknown;
  try {
    fixture = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new SeedError([`${file}: ${(error as Error).message}`]);
  }
  try {
    return await loadSeed(store, fixture);
  } catch (error) {
    if (error instanceof SeedError) throw new SeedError(error.problems.map((p) => `${file}: ${p}`));
    throw error;
  }
}

export interface DemoCredentials {
  username: string;
  password: string;
  client_id: string;
  client_secret: string;
  redirect_uri: string;
  group: string;
  project: string;
}

/** The built-in page the demo application's redirect URI points at. */
export const demoCallbackPath = '/demo/callback';

const demoPassword = customAlphabet('23456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 16);

/**
 * Gives an empty store something to sign in with: user `demo`, group `demo-group`, project
 * `demo-group/demo-project` and the application "Demo App". Answers the plain credentials (printed once by the
 * CLI; the store keeps only hashes), or null when the store already has users.
 */
export async function ensureDemoData(store: Store, baseUrl: string): Promise<DemoCredentials | null> {
  if (store.data.users.length > 0) return null;
  const credentials: DemoCredentials = {
    username: 'demo',
    password: demoPassword(),
    client_id: newClientId(),
    client_secret: newSecret('clientSecret'),
    // The server's own callback page, which shows the code and how to exchange it: the first authorization ends there.
    redirect_uri: `${baseUrl}${demoCallbackPath}`,
    group: 'demo-group',
    project: 'demo-group/demo-project',
  };
  const fixture: SeedFixture = {
    users: [{ username: 'demo', email: 'demo@example.com', name: 'Demo User', password: credentials.password }],
    groups: [{ path: 'demo-group', name: 'Demo Group', visibility: 'private', members: [{ username: 'demo', access_level: 50 }] }],
    projects: [{ namespace: 'demo-group', path: 'demo-project', name: 'Demo Project', visibility: 'private' }],
    applications: [
      {
        name: 'Demo App',
        owner: 'demo',
        client_id: credentials.client_id,
        client_secret: credentials.client_secret,
        redirect_uris: [credentials.redirect_uri],
        scopes: ['api', 'read_api', 'read_user'],
      },
    ],
  };
  await loadSeed(store, fixture);
  return credentials;
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

function fold(name: string): string {
  return name.toLowerCase();
}
