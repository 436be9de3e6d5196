// The JSON file store (file-store.ts) behind the storage interfaces. Every change is one synchronous `commit`
// callback, which the event loop never interleaves with another: checking a name and taking it, or reading a record
// and writing its next version, cannot be split by a concurrent request. That is this store's atomicity, and why
// uniqueness is checked again inside each commit.
import { InputError } from '../../explained-error.js';
import type { Store, StoreState } from './store.js';
import { fileGrantStorage, tokenRecordOf } from './grants.js';
import { fileNotificationSettingsStorage } from './notification-settings.js';
import { fileSessionStorage } from './sessions.js';
import { notificationSettingKey } from '../../domain/storage/index.js';
import type {
  ApplicationRecord,
  GroupRecord,
  Membership,
  OutboxMessageRecord,
  PersonalAccessTokenRecord,
  ProjectRecord,
  UserRecord,
} from './schema.js';
import type {
  Audience,
  AudienceMember,
  FoundNames,
  Group,
  GroupAccess,
  NewGroupRow,
  NewProjectRow,
  NewUserRow,
  Project,
  ProjectAccess,
  SeedRows,
  Storage,
  StoreSnapshot,
} from '../../domain/storage/index.js';

// Member lists reach thousands (every user of a big instance in one project), and every API call on a project asks.
// Records are frozen, so a table built once per list stays right for as long as the list exists.
const levelTables = new WeakMap<readonly Membership[], Map<number, number>>();

function levelIn(members: readonly Membership[], userId: number): number | null {
  if (members.length < 32 || !Object.isFrozen(members)) {
    const m = members.find((x) => x.user_id === userId);
    return m ? m.access_level : null;
  }
  let table = levelTables.get(members);
  if (!table) {
    // Reversed, so that when a user appears twice the first entry wins, as `find` would have it.
    table = new Map(members.toReversed().map((m) => [m.user_id, m.access_level]));
    levelTables.set(members, table);
  }
  return table.get(userId) ?? null;
}

/** A user's membership at `level`, where their first one was (any later one goes: one per user), or else last. */
function withMembership(members: readonly Membership[], userId: number, level: number): Membership[] {
  const membership = { user_id: userId, access_level: level };
  const first = members.findIndex((m) => m.user_id === userId);
  if (first === -1) return [...members, membership];
  return members.flatMap((m, i) => (i === first ? [membership] : m.user_id === userId ? [] : [m]));
}

// What each snapshot holds, out of the domain's reach; a snapshot this module did not make is refused by `restore`.
const snapshotStates = new WeakMap<StoreSnapshot, StoreState>();

export function fileStorage(store: Store): Storage {
  const taken = (field: string, message: string) => new InputError(field, message, 'taken');
  const unknownMember = (field: 'user_id' | 'group_id' | 'project_id', id: number) => new InputError(field, `there is no ${field.slice(0, -3)} with id ${id}`, 'unknown');

  function insertUser(user: NewUserRow): UserRecord {
    if (store.lookup('users', 'username', user.username)) throw taken('username', `the username ${JSON.stringify(user.username)} is already taken`);
    // A project's namespace is a group path or a username, so the two must never be the same name.
    if (store.lookup('groups', 'path', user.username)) throw taken('username', `the username ${JSON.stringify(user.username)} is already a group's path`);
    checkAddresses(user);
    return store.insert('users', { id: store.nextId('users'), ...user });
  }

  /** The user's addresses, primary and secondary, are no other user's (nor twice this one's), whatever the case. */
  function checkAddresses(user: NewUserRow): void {
    if (store.lookup('users', 'address', user.email)) throw taken('email', `the e-mail address ${JSON.stringify(user.email)} is already in use`);
    const own = new Set([user.email.toLowerCase()]);
    for (const address of user.secondary_emails) {
      if (store.lookup('users', 'address', address) || own.has(address.toLowerCase())) {
        throw taken('secondary_emails', `the e-mail address ${JSON.stringify(address)} is already in use`);
      }
      own.add(address.toLowerCase());
    }
  }

  function insertGroup(group: NewGroupRow, members: readonly Membership[]): GroupRecord {
    if (store.lookup('groups', 'path', group.path)) throw taken('path', `the group ${JSON.stringify(group.path)} already exists`);
    if (store.lookup('users', 'username', group.path)) throw taken('path', `${JSON.stringify(group.path)} is already a username`);
    return store.insert('groups', { id: store.nextId('groups'), ...group, members: [...members] });
  }

  function insertProject({ namespace, ...project }: NewProjectRow, members: readonly Membership[]): ProjectRecord {
    const group = store.lookup('groups', 'path', namespace);
    const owner = group?.path ?? store.lookup('users', 'username', namespace)?.username;
    if (owner === undefined) throw new InputError('namespace', `${JSON.stringify(namespace)} is neither a group's path nor a username`, 'unknown');
    const fullPath = `${owner}/${project.path}`;
    if (store.lookup('projects', 'fullPath', fullPath)) throw taken('path', `the project ${JSON.stringify(fullPath)} already exists`);
    return store.insert('projects', { id: store.nextId('projects'), namespace: owner, ...project, group_id: group?.id ?? null, members: [...members] });
  }

  function insertApplication(application: Omit<ApplicationRecord, 'id'>) {
    if (store.lookup('applications', 'uid', application.uid)) throw taken('uid', `the App ID ${JSON.stringify(application.uid)} is already taken`);
    return store.insert('applications', { id: store.nextId('applications'), ...application });
  }

  function insertPersonalAccessToken(token: Omit<PersonalAccessTokenRecord, 'id'>) {
    if (store.lookup('personal_access_tokens', 'token_digest', token.token_digest)) throw taken('token', 'this token is already in use');
    return store.insert('personal_access_tokens', { id: store.nextId('personal_access_tokens'), ...token });
  }

  const groupOf = (project: Project) => (project.group_id === null ? undefined : store.lookup('groups', 'id', project.group_id));
  const membersOf = (project: Project) => store.lookup('projects', 'id', project.id)?.members ?? [];

  function projectAccess(userId: number, project: Project): ProjectAccess {
    const group = groupOf(project);
    return { direct: levelIn(membersOf(project), userId), inherited: group ? levelIn(group.members, userId) : null };
  }

  function groupAccess(userId: number, group: Group): GroupAccess {
    const members = store.lookup('groups', 'id', group.id)?.members ?? [];
    return {
      direct: levelIn(members, userId),
      inAProject: store.data.projects.some((p) => p.group_id === group.id && levelIn(p.members, userId) !== null),
    };
  }

  const setting = (userId: number, type: 'global' | 'group' | 'project', id: number | null) =>
    store.lookup('notification_settings', 'key', notificationSettingKey(userId, type, id));

  return {
    users: {
      async byId(id) {
        return store.lookup('users', 'id', id);
      },
      async byUsername(username) {
        return store.lookup('users', 'username', username);
      },
      async byLogin(login) {
        return store.lookup('users', 'username', login) ?? store.lookup('users', 'email', login);
      },
      async any() {
        return store.data.users.length > 0;
      },
      create(user) {
        return store.commit(() => insertUser(user));
      },
      async setPasswordHash(id, passwordHash) {
        return store.commit(() => {
          const user = store.lookup('users', 'id', id);
          return user && store.update('users', user, { password_hash: passwordHash });
        });
      },
      spendOtpStep(id, step) {
        return store.commit(() => {
          const user = store.lookup('users', 'id', id);
          if (!user || user.state !== 'active' || (user.otp_last_step != null && step <= user.otp_last_step)) return false;
          store.update('users', user, { otp_last_step: step });
          return true;
        });
      },
    },

    namespaces: {
      async groupById(id) {
        return store.lookup('groups', 'id', id);
      },
      async groupByPath(path) {
        return store.lookup('groups', 'path', path);
      },
      async projectById(id) {
        return store.lookup('projects', 'id', id);
      },
      async projectByFullPath(fullPath) {
        return store.lookup('projects', 'fullPath', fullPath);
      },
      async projectAccess(userId, project) {
        return projectAccess(userId, project);
      },
      async groupAccess(userId, group) {
        return groupAccess(userId, group);
      },
      async projectWithAccess(ref, userId) {
        const project = 'id' in ref ? store.lookup('projects', 'id', ref.id) : store.lookup('projects', 'fullPath', ref.path);
        return project && { project, access: projectAccess(userId, project) };
      },
      async groupWithAccess(ref, userId) {
        const group = 'id' in ref ? store.lookup('groups', 'id', ref.id) : store.lookup('groups', 'path', ref.path);
        return group && { group, access: groupAccess(userId, group) };
      },
      createGroup(group, members) {
        return store.commit(() => insertGroup(group, members));
      },
      createProject(project, members) {
        return store.commit(() => insertProject(project, members));
      },
      async setMembership(target, userId, accessLevel) {
        await store.commit(() => {
          const group = 'groupId' in target ? store.lookup('groups', 'id', target.groupId) : undefined;
          const project = 'projectId' in target ? store.lookup('projects', 'id', target.projectId) : undefined;
          // The group or project before the user, in the order PostgreSQL checks its foreign keys.
          if ('groupId' in target && !group) throw unknownMember('group_id', target.groupId);
          if ('projectId' in target && !project) throw unknownMember('project_id', target.projectId);
          if (!store.lookup('users', 'id', userId)) throw unknownMember('user_id', userId);
          if (group) store.update('groups', group, { members: withMembership(group.members, userId, accessLevel) });
          if (project) store.update('projects', project, { members: withMembership(project.members, userId, accessLevel) });
        });
      },
    },

    applications: {
      async byId(id) {
        return store.lookup('applications', 'id', id);
      },
      async byUid(uid) {
        return store.lookup('applications', 'uid', uid);
      },
      async ownedBy(ownerId) {
        return store.data.applications.filter((a) => a.owner_id === ownerId);
      },
      create(application) {
        return store.commit(() => insertApplication(application));
      },
      deleteOwned(ownerId, id, now) {
        return store.commit(() => {
          const application = store.lookup('applications', 'id', id);
          if (!application || application.owner_id !== ownerId) return false;
          store.remove('applications', (a) => a.id === id);
          store.remove('authorization_codes', (c) => c.application_id === id);
          for (const token of store.data.access_tokens.filter((t) => t.application_id === id && t.revoked_at === null)) {
            store.update('access_tokens', token, { revoked_at: now });
          }
          return true;
        });
      },
    },

    personalAccessTokens: {
      async withUserByDigest(tokenDigest) {
        const token = store.lookup('personal_access_tokens', 'token_digest', tokenDigest);
        const user = token && store.lookup('users', 'id', token.user_id);
        return token && user ? { token, user, globalSetting: setting(user.id, 'global', null) } : undefined;
      },
      async ofUser(userId) {
        return store.data.personal_access_tokens.filter((t) => t.user_id === userId).reverse();
      },
      create(token) {
        return store.commit(() => insertPersonalAccessToken(token));
      },
      revokeOwned(userId, id) {
        return store.commit(() => {
          const record = store.lookup('personal_access_tokens', 'id', id);
          if (!record || record.user_id !== userId) return null;
          return record.revoked ? record : store.update('personal_access_tokens', record, { revoked: true });
        });
      },
    },

    codes: {
      async create(code) {
        await store.commit(() => store.insert('authorization_codes', code));
      },
    },

    tokens: {
      async issue(pair) {
        await store.commit(() => store.insert('access_tokens', tokenRecordOf(pair, null)));
      },
      async byAccessDigest(tokenDigest) {
        return store.lookup('access_tokens', 'token_digest', tokenDigest);
      },
      async withUserByAccessDigest(tokenDigest) {
        const token = store.lookup('access_tokens', 'token_digest', tokenDigest);
        const user = token && store.lookup('users', 'id', token.user_id);
        return token && user ? { token, user, globalSetting: setting(user.id, 'global', null) } : undefined;
      },
      async byRefreshDigest(refreshDigest) {
        return store.lookup('access_tokens', 'refresh_digest', refreshDigest);
      },
      async revoke(id, now) {
        await store.commit(() => {
          const record = store.lookup('access_tokens', 'id', id);
          if (record && record.revoked_at === null) store.update('access_tokens', record, { revoked_at: now });
        });
      },
      async unrevokedOfUser(userId) {
        return store.data.access_tokens.filter((t) => t.user_id === userId && t.revoked_at === null);
      },
      revokeAuthorization(userId, applicationId, now) {
        return store.commit(() => {
          const mine = (r: { user_id: number; application_id: number | null }) => r.user_id === userId && r.application_id === applicationId;
          const tokens = store.data.access_tokens.filter((t) => mine(t) && t.revoked_at === null);
          const hasCodes = store.data.authorization_codes.some((c) => mine(c) && c.used_at === null && c.expires_at > now);
          for (const token of tokens) store.update('access_tokens', token, { revoked_at: now });
          store.remove('authorization_codes', mine);
          return tokens.length > 0 || hasCodes;
        });
      },
    },

    grants: fileGrantStorage(store),
    notificationSettings: fileNotificationSettingsStorage(store),
    sessions: fileSessionStorage(store),

    recipients: {
      async audience(projectId, userIds) {
        const project = store.lookup('projects', 'id', projectId);
        if (!project) return undefined;
        const interested = new Set<number>(project.members.map((m) => m.user_id));
        const group = groupOf(project);
        for (const m of group?.members ?? []) interested.add(m.user_id);
        for (const s of store.data.notification_settings) {
          if ((s.source_type === 'project' && s.source_id === project.id) || (s.source_type === 'group' && group && s.source_id === group.id)) interested.add(s.user_id);
        }
        const members: Audience['members'] = new Map();
        for (const id of new Set([...interested, ...userIds])) {
          const user = store.lookup('users', 'id', id);
          if (!user) continue;
          const settings: AudienceMember['settings'] = {};
          const own = setting(id, 'project', project.id);
          const ofGroup = group ? setting(id, 'group', group.id) : undefined;
          const global = setting(id, 'global', null);
          if (own) settings.project = own;
          if (ofGroup) settings.group = ofGroup;
          if (global) settings.global = global;
          members.set(id, { user, access: projectAccess(id, project), settings });
        }
        return { project, interested: [...interested], members };
      },
    },

    mail: {
      async recordEvent(event, messages) {
        await store.commit(() => {
          store.insert('notification_events', event);
          for (const message of messages) store.insert('outbox', { ...message, status: 'queued', attempts: 0, claimed_until: null, last_error: null, sent_at: null });
        });
      },
      claimDue(now, limit, leaseSeconds) {
        return store.commit(() => {
          const due = store.data.outbox.filter((m) => m.status === 'queued' && m.next_attempt_at <= now && (m.claimed_until === null || m.claimed_until < now)).slice(0, limit);
          return due.map((m) => store.update('outbox', m, { claimed_until: now + leaseSeconds, attempts: m.attempts + 1 }));
        });
      },
      async markSent(id, now) {
        await store.commit(() => {
          const m = store.lookup('outbox', 'id', id);
          if (m) store.update('outbox', m, { status: 'sent', sent_at: now, claimed_until: null, last_error: null });
        });
      },
      async markRetry(id, nextAttemptAt, error) {
        await store.commit(() => {
          const m = store.lookup('outbox', 'id', id);
          if (m) store.update('outbox', m, { next_attempt_at: nextAttemptAt, claimed_until: null, last_error: error });
        });
      },
      async markFailed(id, error) {
        await store.commit(() => {
          const m = store.lookup('outbox', 'id', id);
          if (m) store.update('outbox', m, { status: 'failed', claimed_until: null, last_error: error });
        });
      },
      async recent({ limit, userId, eventId }) {
        const found: OutboxMessageRecord[] = [];
        const { outbox } = store.data;
        for (let i = outbox.length - 1; i >= 0 && found.length < limit; i--) {
          const message = outbox[i]!;
          if ((userId === undefined || message.user_id === userId) && (eventId === undefined || message.event_id === eventId)) found.push(message);
        }
        return found;
      },
    },

    maintenance: {
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
        const found = (names: string[], find: (name: string) => string | undefined) => {
          const map = new Map<string, string>();
          for (const name of names) {
            const stored = find(name);
            if (stored !== undefined) map.set(name.toLowerCase(), stored);
          }
          return map;
        };
        return {
          usernames: found(query.usernames, (n) => store.lookup('users', 'username', n)?.username),
          emails: found(query.emails, (n) => {
            const owner = store.lookup('users', 'address', n);
            return owner && [owner.email, ...owner.secondary_emails].find((address) => address.toLowerCase() === n.toLowerCase());
          }),
          groupPaths: found(query.groupPaths, (n) => store.lookup('groups', 'path', n)?.path),
          projectPaths: found(query.projectPaths, (n) => {
            const p = store.lookup('projects', 'fullPath', n);
            return p && `${p.namespace}/${p.path}`;
          }),
          clientIds: found(query.clientIds, (n) => store.lookup('applications', 'uid', n)?.uid),
          tokenDigests: found(query.tokenDigests, (n) => store.lookup('personal_access_tokens', 'token_digest', n)?.token_digest),
        } satisfies FoundNames;
      },
      async applySeed(rows: SeedRows) {
        // One commit, checked whole before its first insert: a name taken since the seed was planned throws here,
        // before anything of the seed is applied (the rows were checked against each other when planned).
        await store.commit(() => {
          for (const { user, tokens } of rows.users) {
            if (store.lookup('users', 'username', user.username) || store.lookup('groups', 'path', user.username)) throw taken('username', `the username ${JSON.stringify(user.username)} is already taken`);
            checkAddresses(user);
            for (const token of tokens) if (store.lookup('personal_access_tokens', 'token_digest', token.token_digest)) throw taken('token', 'this token is already in use');
          }
          for (const { group } of rows.groups) {
            if (store.lookup('groups', 'path', group.path) || store.lookup('users', 'username', group.path)) throw taken('path', `the group ${JSON.stringify(group.path)} already exists`);
          }
          for (const { project } of rows.projects) {
            if (store.lookup('projects', 'fullPath', `${project.namespace}/${project.path}`)) throw taken('path', `the project ${JSON.stringify(`${project.namespace}/${project.path}`)} already exists`);
          }
          for (const { application } of rows.applications) {
            if (store.lookup('applications', 'uid', application.uid)) throw taken('uid', `the App ID ${JSON.stringify(application.uid)} is already taken`);
          }
          const userId = (username: string) => store.lookup('users', 'username', username)!.id;
          const members = (list: SeedRows['groups'][number]['members']) => list.map((m) => ({ user_id: userId(m.username), access_level: m.access_level }));
          for (const { user, tokens } of rows.users) {
            const record = insertUser(user);
            for (const token of tokens) insertPersonalAccessToken({ ...token, user_id: record.id });
          }
          for (const { group, members: list } of rows.groups) insertGroup(group, members(list));
          for (const { project, members: list } of rows.projects) insertProject(project, members(list));
          for (const { owner, application } of rows.applications) insertApplication({ ...application, owner_id: userId(owner) });
        });
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
      close() {
        return store.close();
      },
      describe() {
        return store.file ?? 'in memory';
      },
    },
  };
}
