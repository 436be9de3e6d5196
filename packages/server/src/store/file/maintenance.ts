// Looking after the file store as a whole (domain/storage/maintenance.ts): its secret, pruning, readiness, seeding,
// snapshots and restores, and closing. A seed is checked whole, then inserted through inserts.ts, as creating one
// record is, so both write the same records.
import { nameKeys, refusal, type FoundNames, type MaintenanceStorage, type NameQuery, type SeedRows, type StoreSnapshot } from '../../domain/storage/index.js';
import { checkAddresses, insertApplication, insertGroup, insertPersonalAccessToken, insertProject, insertUser } from './inserts.js';
import type { Store, StoreState } from './store.js';

// What each snapshot holds, out of the domain's reach; a snapshot this module did not make is refused by `restore`.
const snapshotStates = new WeakMap<StoreSnapshot, StoreState>();

export function fileMaintenanceStorage(store: Store): MaintenanceStorage {
  return {
    async instanceSecret(name) {
      if (name !== 'session_key') throw new RangeError(`the file store keeps no secret named ${name}`);
      return store.data.secrets.session_key;
    },
    prune(now) {
      return store.commit(() => store.prune(now));
    },
    readiness() {
      return store.readiness();
    },
    async existingNames(query) {
      return existingNames(store, query);
    },
    async applySeed(rows: SeedRows) {
      await applySeed(store, rows);
    },
    async snapshot() {
      const snapshot = Object.freeze({}) as StoreSnapshot;
      snapshotStates.set(snapshot, store.captureState());
      return snapshot;
    },
    async restore(snapshot) {
      const state = snapshotStates.get(snapshot);
      if (!state) throw new TypeError('restore takes a snapshot that the file store made');
      await store.commit(() => store.replaceState(state));
    },
    observeWrites(observer) {
      store.commitObserver = observer;
    },
    poolUsage() {
      return null;
    },
    close() {
      return store.close();
    },
    describe() {
      return store.file ?? 'in memory';
    },
  };
}

function existingNames(store: Store, query: NameQuery): FoundNames {
  const found = (kind: keyof NameQuery, find: (name: string) => string | undefined) => {
    const map = new Map<string, string>();
    for (const name of query[kind]) {
      const stored = find(name);
      if (stored !== undefined) map.set(nameKeys[kind](name), stored);
    }
    return map;
  };
  return {
    usernames: found('usernames', (n) => store.lookup('users', 'username', n)?.username),
    emails: found('emails', (n) => {
      const owner = store.lookup('users', 'address', n);
      return owner && [owner.email, ...owner.secondary_emails].find((address) => address.toLowerCase() === n.toLowerCase());
    }),
    groupPaths: found('groupPaths', (n) => store.lookup('groups', 'path', n)?.path),
    projectPaths: found('projectPaths', (n) => {
      const p = store.lookup('projects', 'fullPath', n);
      return p && `${p.namespace}/${p.path}`;
    }),
    clientIds: found('clientIds', (n) => store.lookup('applications', 'uid', n)?.uid),
    tokenDigests: found('tokenDigests', (n) => store.lookup('personal_access_tokens', 'token_digest', n)?.token_digest),
  } satisfies FoundNames;
}

function applySeed(store: Store, rows: SeedRows): Promise<void> {
  // One commit, checked whole before its first insert: a name taken since the seed was planned throws here,
  // before anything of the seed is applied (the rows were checked against each other when planned).
  return store.commit(() => {
    for (const { user, tokens } of rows.users) {
      if (store.lookup('users', 'username', user.username) || store.lookup('groups', 'path', user.username)) throw refusal.username(user.username);
      checkAddresses(store, user);
      for (const token of tokens) if (store.lookup('personal_access_tokens', 'token_digest', token.token_digest)) throw refusal.token();
    }
    for (const { group } of rows.groups) {
      if (store.lookup('groups', 'path', group.path) || store.lookup('users', 'username', group.path)) throw refusal.group(group.path);
    }
    for (const { project } of rows.projects) {
      if (store.lookup('projects', 'fullPath', `${project.namespace}/${project.path}`)) throw refusal.project(`${project.namespace}/${project.path}`);
    }
    for (const { application } of rows.applications) {
      if (store.lookup('applications', 'uid', application.uid)) throw refusal.uid(application.uid);
    }
    const userId = (username: string) => store.lookup('users', 'username', username)!.id;
    const members = (list: SeedRows['groups'][number]['members']) => list.map((m) => ({ user_id: userId(m.username), access_level: m.access_level }));
    for (const { user, tokens } of rows.users) {
      const record = insertUser(store, user);
      for (const token of tokens) insertPersonalAccessToken(store, { ...token, user_id: record.id });
    }
    for (const { group, members: list } of rows.groups) insertGroup(store, group, members(list));
    for (const { project, members: list } of rows.projects) insertProject(store, project, members(list));
    for (const { owner, application } of rows.applications) insertApplication(store, { ...application, owner_id: userId(owner) });
  });
}
