import type { Client } from 'openapi-fetch';
import type { components, operations, paths } from './generated/openapi.js';
import { asText, authenticatedClient, type FetchLike, json, noContent, type TokenbellAuth } from './internal.js';

type Schemas = components['schemas'];

/** The current user (`GET /api/v3/user`). */
export type User = Schemas['User'];
/** A notification level (spec 2.5). */
export type NotificationLevel = Schemas['NotificationLevel'];
/** The levels a global setting may take (`global` would refer to itself). */
export type GlobalNotificationLevel = Schemas['GlobalNotificationLevel'];
/** The twelve e-mail events of a `custom` level (spec 2.6). */
export type NotificationEvents = Schemas['NotificationEvents'];
/** Global settings: level and notification e-mail, plus `events` exactly when the level is `custom`. */
export type GlobalNotificationSettings = Schemas['GlobalNotificationSettings'];
/** Group or project settings: `{ level }`, or `{ level: 'custom', events }`. */
export type NotificationSettings = Schemas['NotificationSettings'];
/** Parameters of a global update; all optional. */
export type GlobalNotificationSettingsUpdate = Schemas['GlobalNotificationSettingsUpdate'];
/** Parameters of a group or project update; all optional. */
export type NotificationSettingsUpdate = Schemas['NotificationSettingsUpdate'];
/** A group, with the fields of the service's group object that tokenbell keeps. */
export type Group = Schemas['Group'];
/** A project, with the fields of the service's project object that tokenbell keeps. */
export type Project = Schemas['Project'];
/** A group's or project's numeric id, or its full path (`acme/widgets`), not URL-encoded. */
export type GroupOrProjectId = Schemas['GroupOrProjectId'];

/** The service's version and metadata answer (`GET /api/v3/version`, `/metadata`). */
export type InstanceMetadata = Schemas['InstanceMetadata'];
/** A personal access token as the service shows it (never its secret). */
export type PersonalAccessToken = Schemas['PersonalAccessToken'];
/** Another user, as anyone who may read users sees them. */
export type PublicUser = Schemas['PublicUser'];

/** A membership of a group or project (`members/all/:user_id`). */
export type Member = Schemas['Member'];
/** A project in the simple view (`simple: true`). */
export type ProjectSimple = Schemas['ProjectSimple'];
/** The filters, order and page of `GET /api/v3/groups`. */
export type GroupListQuery = NonNullable<operations['listGroups']['parameters']['query']>;
/** The filters, order and page of `GET /api/v3/projects`. */
export type ProjectListQuery = NonNullable<operations['listProjects']['parameters']['query']>;

/** The openapi-fetch client over every path of the document. */
export type TokenbellRawClient = Client<paths>;

export type { TokenbellAuth } from './internal.js';

export interface TokenbellClientOptions {
  /** The instance's scheme, host, port and optional path prefix, e.g. `http://127.0.0.1:4010` for the Prism mock. */
  baseUrl: string;
  /** Credentials for every request; change them later with {@link TokenbellClient.setAuth}. */
  auth?: TokenbellAuth | null;
  /** A `fetch` to use instead of `globalThis.fetch` (tests, proxies, retries). */
  fetch?: FetchLike;
}

/** Reads and changes the notification settings of one group or project. */
export interface NotificationSettingsResource {
  /**
   * `GET .../notification_settings`: the user's settings; `{ level: 'global' }` where they made no choice.
   * @throws {@link TokenbellNotFoundError} for a group or project that does not exist or the user may not see.
   */
  get(): Promise<NotificationSettings>;
  /**
   * `PUT .../notification_settings` with a JSON body. A level other than `custom` answers `{ level }`;
   * `custom` answers the level and all twelve events. A rejected request changes nothing.
   * @throws {@link TokenbellValidationError} for a value out of range.
   */
  update(params: NotificationSettingsUpdate): Promise<NotificationSettings>;
}

export interface TokenbellClient {
  /**
   * The underlying openapi-fetch client: every path of the document, fully typed, with the same
   * authentication. It answers `{ data, error, response }` instead of throwing HTTP errors; network
   * failures still throw {@link TokenbellNetworkError}.
   */
  readonly raw: TokenbellRawClient;
  /** Replaces the credentials for subsequent requests (after a refresh, say); `null` sends none. */
  setAuth(auth: TokenbellAuth | null): void;
  readonly user: {
    /** `GET /api/v3/user`: the user the credentials act for (scope `read_user`). */
    current(): Promise<User>;
  };
  readonly users: {
    /**
     * `GET /api/v3/users/:id`: a user by id (scope `read_user`); every field for the account itself or an
     * administrator, the basic ones for anyone else.
     * @throws {@link TokenbellNotFoundError} for an unknown id.
     */
    get(id: number): Promise<User | PublicUser>;
  };
  readonly instance: {
    /** `GET /api/v3/version`: the service's release the instance answers as (any valid token). */
    version(): Promise<InstanceMetadata>;
    /** `GET /api/v3/metadata`: the same fields (any valid token). */
    metadata(): Promise<InstanceMetadata>;
  };
  readonly personalAccessTokens: {
    /**
     * `GET /api/v3/personal_access_tokens/self`: the personal access token the client is authenticated with.
     * @throws {@link TokenbellNotFoundError} when the credentials are an OAuth token.
     */
    self(): Promise<PersonalAccessToken>;
    /** `DELETE /api/v3/personal_access_tokens/self`: revokes that token; the client's later requests are 401. */
    revokeSelf(): Promise<void>;
  };
  readonly groups: {
    /**
     * `GET /api/v3/groups/:id`: a group by numeric id or full path (scope `read_api`).
     * @throws {@link TokenbellNotFoundError} for a group that does not exist or the user may not see.
     */
    get(id: GroupOrProjectId): Promise<Group>;
    /**
     * `GET /api/v3/groups`: one page (`page`, `per_page`) of the groups the user belongs to, or may see with
     * `all_available` (scope `read_api`). `raw` answers the pagination headers too.
     */
    list(query?: GroupListQuery): Promise<Group[]>;
    /**
     * `GET /api/v3/groups/:id/members/all/:user_id`: the user's membership of the group.
     * @throws {@link TokenbellNotFoundError} for a group the caller may not see, or a user who is no member.
     */
    member(id: GroupOrProjectId, userId: number): Promise<Member>;
  };
  readonly projects: {
    /**
     * `GET /api/v3/projects/:id`: a project by numeric id or full path (`'acme/widgets'`, unencoded; scope `read_api`).
     * @throws {@link TokenbellNotFoundError} for a project that does not exist or the user may not see.
     */
    get(idOrPath: GroupOrProjectId): Promise<Project>;
    /** `GET /api/v3/projects`: one page of the projects the user may see, narrowed by the filters (scope `read_api`). */
    list(query?: ProjectListQuery): Promise<Array<Project | ProjectSimple>>;
    /**
     * `GET /api/v3/projects/:id/members/all/:user_id`: the user's membership of the project, inherited ones included.
     * @throws {@link TokenbellNotFoundError} for a project the caller may not see, or a user who is no member.
     */
    member(idOrPath: GroupOrProjectId, userId: number): Promise<Member>;
  };
  readonly notificationSettings: {
    readonly global: {
      /** `GET /api/v3/notification_settings`: level, notification e-mail, and events when `custom`. */
      get(): Promise<GlobalNotificationSettings>;
      /**
       * `PUT /api/v3/notification_settings` with a JSON body; answers the updated settings.
       * @throws {@link TokenbellValidationError} for a value out of range (e.g. level `global`).
       */
      update(params: GlobalNotificationSettingsUpdate): Promise<GlobalNotificationSettings>;
    };
    /** A group by numeric id or full path (`'acme'`); the path is URL-encoded for you. */
    group(id: GroupOrProjectId): NotificationSettingsResource;
    /** A project by numeric id or full path (`'acme/widgets'`); pass it unencoded, it is URL-encoded for you. */
    project(idOrPath: GroupOrProjectId): NotificationSettingsResource;
  };
}

/**
 * Creates a client for a tokenbell instance.
 *
 * @example
 * ```ts
 * const tb = createTokenbellClient({ baseUrl: 'http://127.0.0.1:4010', auth: { accessToken, via: 'header' } });
 * const settings = await tb.notificationSettings.project('acme/widgets').get();
 * ```
 */
export function createTokenbellClient(options: TokenbellClientOptions): TokenbellClient {
  let auth = options.auth ?? null;
  const raw = authenticatedClient(options.baseUrl, options.fetch, () => auth);

  return {
    raw,
    setAuth(next) {
      auth = next;
    },
    user: {
      current: () => json<User>(raw.GET('/api/v3/user', asText)),
    },
    users: {
      get: (id) => json<User | PublicUser>(raw.GET('/api/v3/users/{id}', { params: { path: { id } }, ...asText })),
    },
    instance: {
      version: () => json<InstanceMetadata>(raw.GET('/api/v3/version', asText)),
      metadata: () => json<InstanceMetadata>(raw.GET('/api/v3/metadata', asText)),
    },
    personalAccessTokens: {
      self: () => json<PersonalAccessToken>(raw.GET('/api/v3/personal_access_tokens/self', asText)),
      revokeSelf: () => noContent(raw.DELETE('/api/v3/personal_access_tokens/self', asText)),
    },
    groups: {
      get: (id) => json<Group>(raw.GET('/api/v3/groups/{id}', { params: { path: { id } }, ...asText })),
      list: (query = {}) => json<Group[]>(raw.GET('/api/v3/groups', { params: { query }, ...asText })),
      member: (id, userId) => json<Member>(raw.GET('/api/v3/groups/{id}/members/all/{user_id}', { params: { path: { id, user_id: userId } }, ...asText })),
    },
    projects: {
      get: (id) => json<Project>(raw.GET('/api/v3/projects/{id}', { params: { path: { id } }, ...asText })),
      list: (query = {}) => json<Array<Project | ProjectSimple>>(raw.GET('/api/v3/projects', { params: { query }, ...asText })),
      member: (id, userId) => json<Member>(raw.GET('/api/v3/projects/{id}/members/all/{user_id}', { params: { path: { id, user_id: userId } }, ...asText })),
    },
    notificationSettings: {
      global: {
        get: () => json<GlobalNotificationSettings>(raw.GET('/api/v3/notification_settings', asText)),
        update: (params) =>
          json<GlobalNotificationSettings>(raw.PUT('/api/v3/notification_settings', { body: params, ...asText })),
      },
      group: (id) => settingsResource(raw, '/api/v3/groups/{id}/notification_settings', id),
      // openapi-fetch's path serializer applies encodeURIComponent, so 'acme/widgets' arrives as
      // acme%2Fwidgets; encoding here as well would send acme%252Fwidgets.
      project: (id) => settingsResource(raw, '/api/v3/projects/{id}/notification_settings', id),
    },
  };
}

/** A group's and a project's settings are the same operations on two paths. */
function settingsResource(
  raw: TokenbellRawClient,
  path: '/api/v3/groups/{id}/notification_settings' | '/api/v3/projects/{id}/notification_settings',
  id: GroupOrProjectId,
): NotificationSettingsResource {
  return {
    get: () => json<NotificationSettings>(raw.GET(path, { params: { path: { id } }, ...asText })),
    update: (params) => json<NotificationSettings>(raw.PUT(path, { params: { path: { id } }, body: params, ...asText })),
  };
}
