// Small in-memory StoreData objects for domain tests, built step by step so each test states only what it relies on.
import { expect } from 'vitest';
import { OAuthError } from '../../src/domain/oauth/errors.js';
import { type TokenResponse, issueTokenPair } from '../../src/domain/oauth/tokens.js';
import { notificationEvents } from '../../src/openapi/document.js';
import { freshData, memoryStoreOf, type Store } from '../../src/store/file/store.js';
import { fileStorage } from '../../src/store/file/storage.js';
import type { Storage } from '../../src/domain/storage/index.js';
import { type GroupRecord, type Membership, type NotificationEvent, type NotificationEvents, type NotificationLevel, type ProjectRecord, type Scope, type UserRecord, type Visibility } from '../../src/domain/storage/records.js';
import { type StoreData } from '../../src/store/file/schema.js';

export const GUEST = 10;
export const DEVELOPER = 30;

/** 2016-09-22T00:00:00Z */
const created = 1474502400;

export function events(on: readonly NotificationEvent[] = []): NotificationEvents {
  return Object.fromEntries(notificationEvents.map((e) => [e, on.includes(e)])) as NotificationEvents;
}

export function eventsExcept(off: readonly NotificationEvent[]): NotificationEvents {
  return events(notificationEvents.filter((e) => !off.includes(e)));
}

/** A store over a copy of `data` (the store freezes what it takes), for the domain functions that query one. */
export const storeOf = (data: StoreData): Store => memoryStoreOf(structuredClone(data));

/** The storage interfaces over a copy of `data`, as the domain asks for them. */
export const storageOf = (data: StoreData): Storage => fileStorage(storeOf(data));

/** A fresh storage with an active user, jane, and a blocked one: the two that every rule about acting tells apart. */
export function activeAndBlocked(): { storage: Storage; jane: UserRecord; blocked: UserRecord } {
  const builder = new StoreBuilder();
  const jane = builder.user('jane');
  const blocked = builder.user('blocked', { state: 'blocked' });
  return { storage: builder.storage(), jane, blocked };
}

/** Issues the user an access token without a refresh token, as the password grant does; answers the plain token. */
export async function issueAccessToken(
  storage: Storage,
  user: UserRecord,
  options: { now: number; ttl: number; scopes?: readonly Scope[]; application_id?: number | null },
): Promise<string> {
  const { now, ttl, scopes = ['api'], application_id = null } = options;
  return (await issueTokenPair(storage, { user_id: user.id, application_id, scopes, withRefreshToken: false, now, ttl })).access_token;
}

/** The token response the grants answer: new random tokens with their prefixes, and these values. */
export function tokenResponse(values: { scope: string; expires_in: number; created_at: number; refresh: boolean }): TokenResponse {
  const { scope, expires_in, created_at, refresh } = values;
  return {
    access_token: expect.stringMatching(/^tba_[0-9A-Za-z]{43}$/) as string,
    token_type: 'bearer',
    expires_in,
    ...(refresh ? { refresh_token: expect.stringMatching(/^tbr_[0-9A-Za-z]{43}$/) as string } : {}),
    scope,
    created_at,
  };
}

/** The OAuth error `attempt` was refused with, as its status, code and description; anything else fails the test. */
export async function oauthRefusal(attempt: Promise<unknown>): Promise<{ status: number; code: string; description: string }> {
  const error: unknown = await attempt.then(
    (answer) => new Error(`answered ${JSON.stringify(answer)}`),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OAuthError);
  const { status, code, description } = error as OAuthError;
  return { status, code, description };
}

export class StoreBuilder {
  // The store's own empty data, so a new collection reaches these tests too; a fixed key keeps them deterministic.
  readonly data: StoreData = { ...freshData(), secrets: { session_key: 'test-session-key' } };

  /** A store holding what was built so far. */
  store(): Store {
    return storeOf(this.data);
  }

  /** The storage interfaces over what was built so far. */
  storage(): Storage {
    return storageOf(this.data);
  }

  user(username: string, extra: Partial<Omit<UserRecord, 'id' | 'username'>> = {}): UserRecord {
    const id = ++this.data.sequences.users;
    const user: UserRecord = {
      id,
      username,
      email: `${username}@example.com`,
      secondary_emails: [],
      name: username,
      password_hash: 'scrypt$16384$8$1$c2FsdA$aGFzaA',
      two_factor_enabled: false,
      state: 'active',
      is_admin: false,
      bio: '',
      created_at: created,
      ...extra,
    };
    this.data.users.push(user);
    return user;
  }

  group(path: string, visibility: Visibility = 'private'): GroupRecord {
    const group: GroupRecord = { id: ++this.data.sequences.groups, path, name: path, visibility, members: [], created_at: created };
    this.data.groups.push(group);
    return group;
  }

  /** A project in `group`, or in the personal namespace `namespace` when `group` is null. */
  project(path: string, visibility: Visibility, group: GroupRecord | null, namespace = 'someone'): ProjectRecord {
    const project: ProjectRecord = {
      id: ++this.data.sequences.projects,
      namespace: group ? group.path : namespace,
      path,
      name: path,
      visibility,
      group_id: group ? group.id : null,
      members: [],
      created_at: created,
    };
    this.data.projects.push(project);
    return project;
  }

  member(of: GroupRecord | ProjectRecord, user: UserRecord, access_level = DEVELOPER): this {
    // Still a builder's plain data: the store freezes records only once it opens on them.
    (of.members as Membership[]).push({ user_id: user.id, access_level });
    return this;
  }

  globalSetting(user: UserRecord, level: NotificationLevel, opts: { events?: NotificationEvents; notification_email?: string } = {}): this {
    this.data.notification_settings.push({
      user_id: user.id,
      source_type: 'global',
      source_id: null,
      level,
      notification_email: opts.notification_email ?? null,
      events: opts.events ?? events(),
    });
    return this;
  }

  groupSetting(user: UserRecord, group: GroupRecord, level: NotificationLevel, evts: NotificationEvents = events()): this {
    this.data.notification_settings.push({
      user_id: user.id,
      source_type: 'group',
      source_id: group.id,
      level,
      notification_email: null,
      events: evts,
    });
    return this;
  }

  projectSetting(user: UserRecord, project: ProjectRecord, level: NotificationLevel, evts: NotificationEvents = events()): this {
    this.data.notification_settings.push({
      user_id: user.id,
      source_type: 'project',
      source_id: project.id,
      level,
      notification_email: null,
      events: evts,
    });
    return this;
  }
}
