import type { Client, Middleware } from 'openapi-fetch';
import { TokenbellApiError } from './errors.js';
import type { components, paths } from './generated/openapi.js';
import { type FetchLike, parseJson, typedClient } from './internal.js';

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

/** A notification event to record through the test helpers: kind, title, and users by username. */
export type NotificationEventRequest = Schemas['NotificationEventRequest'];
/** The event recorded, with the users it mails and why. */
export type NotificationEventResult = Schemas['NotificationEventResult'];
/** One queued, sent or failed notification mail. */
export type NotificationMessage = Schemas['NotificationMessage'];
/** Filters for {@link TokenbellClient.testHelpers}' `messages`. */
export type NotificationMessageQuery = NonNullable<paths['/api/v3/test_helpers/notification_messages']['get']['parameters']['query']>;

/** The openapi-fetch client over every path of the document. */
export type TokenbellRawClient = Client<paths>;

/**
 * How API calls authenticate (spec section 5):
 * - `{ accessToken, via: 'header' }` sends `Authorization: Bearer <token>` (RFC 6750 section 2.1), the default;
 * - `{ accessToken, via: 'query' }` sends `?access_token=<token>` (RFC 6750 section 2.3), which ends up in logs;
 * - `{ privateToken }` sends a personal access token as `PRIVATE-TOKEN: <token>`.
 */
export type TokenbellAuth =
  | { accessToken: string; via?: 'header' | 'query' }
  | { privateToken: string };

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
  readonly groups: {
    /**
     * `GET /api/v3/groups/:id`: a group by numeric id or full path (scope `read_api`).
     * @throws {@link TokenbellNotFoundError} for a group that does not exist or the user may not see.
     */
    get(id: GroupOrProjectId): Promise<Group>;
  };
  readonly projects: {
    /**
     * `GET /api/v3/projects/:id`: a project by numeric id or full path (`'acme/widgets'`, unencoded; scope `read_api`).
     * @throws {@link TokenbellNotFoundError} for a project that does not exist or the user may not see.
     */
    get(idOrPath: GroupOrProjectId): Promise<Project>;
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
  /**
   * The test-helper area: not part of the service, off unless the instance runs with test helpers, and for
   * administrators only (a 404 when off, a 403 for anyone else).
   */
  readonly testHelpers: {
    /**
     * `POST /api/v3/test_helpers/projects/:id/notification_events`: records an event on a project and queues its mail;
     * answers the recipients and why each was chosen.
     * @throws {@link TokenbellValidationError} for an unknown user, or an author who may not see the project.
     */
    emitNotificationEvent(project: GroupOrProjectId, event: NotificationEventRequest): Promise<NotificationEventResult>;
    /** `GET /api/v3/test_helpers/notification_messages`: the mail queued, newest first, with its delivery status. */
    notificationMessages(query?: NotificationMessageQuery): Promise<NotificationMessage[]>;
  };
}

// Parsing ourselves (rather than openapi-fetch's `parseAs: 'json'`) lets a 2xx with a broken body
// become a TokenbellApiError carrying the response instead of a bare SyntaxError.
const asText = { parseAs: 'text' } as const;

async function json<T>(pending: Promise<{ data?: string; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await pending;
  if (!response.ok) throw TokenbellApiError.from(response, error);
  const parsed = parseJson(data);
  if (!parsed.ok) {
    throw new TokenbellApiError({
      status: response.status,
      message: `${response.status} response body is not JSON`,
      body: data,
      response,
      cause: parsed.error,
    });
  }
  return parsed.value as T;
}

async function applyAuth(request: Request, auth: TokenbellAuth): Promise<Request | undefined> {
  if ('privateToken' in auth) {
    request.headers.set('PRIVATE-TOKEN', auth.privateToken);
    return undefined;
  }
  if (auth.via !== 'query') {
    request.headers.set('Authorization', `Bearer ${auth.accessToken}`);
    return undefined;
  }
  // A Request's URL is immutable, so the query variant needs a new Request. The body is buffered
  // because passing a stream on needs `duplex: 'half'`, which not every runtime supports.
  const url = new URL(request.url);
  url.searchParams.set('access_token', auth.accessToken);
  return new Request(url, {
    method: request.method,
    headers: request.headers,
    body: request.body === null ? null : await request.arrayBuffer(),
    signal: request.signal,
    credentials: request.credentials,
    cache: request.cache,
    redirect: request.redirect,
    integrity: request.integrity,
    keepalive: request.keepalive,
    mode: request.mode,
    referrerPolicy: request.referrerPolicy,
  });
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
  const raw = typedClient(options.baseUrl, options.fetch);
  // Reads `auth` on every request, which is what makes setAuth take effect on an existing client.
  const authentication: Middleware = { onRequest: ({ request }) => (auth ? applyAuth(request, auth) : undefined) };
  raw.use(authentication);

  return {
    raw,
    setAuth(next) {
      auth = next;
    },
    user: {
      current: () => json<User>(raw.GET('/api/v3/user', asText)),
    },
    groups: {
      get: (id) => json<Group>(raw.GET('/api/v3/groups/{id}', { params: { path: { id } }, ...asText })),
    },
    projects: {
      get: (id) => json<Project>(raw.GET('/api/v3/projects/{id}', { params: { path: { id } }, ...asText })),
    },
    testHelpers: {
      emitNotificationEvent: (id, event) =>
        json<NotificationEventResult>(raw.POST('/api/v3/test_helpers/projects/{id}/notification_events', { params: { path: { id } }, body: event, ...asText })),
      notificationMessages: (query = {}) =>
        json<NotificationMessage[]>(raw.GET('/api/v3/test_helpers/notification_messages', { params: { query }, ...asText })),
    },
    notificationSettings: {
      global: {
        get: () => json<GlobalNotificationSettings>(raw.GET('/api/v3/notification_settings', asText)),
        update: (params) =>
          json<GlobalNotificationSettings>(raw.PUT('/api/v3/notification_settings', { body: params, ...asText })),
      },
      group: (id) => ({
        get: () =>
          json<NotificationSettings>(raw.GET('/api/v3/groups/{id}/notification_settings', { params: { path: { id } }, ...asText })),
        update: (params) =>
          json<NotificationSettings>(
            raw.PUT('/api/v3/groups/{id}/notification_settings', { params: { path: { id } }, body: params, ...asText }),
          ),
      }),
      // openapi-fetch's path serializer applies encodeURIComponent, so 'acme/widgets' arrives as
      // acme%2Fwidgets; encoding here as well would send acme%252Fwidgets.
      project: (id) => ({
        get: () =>
          json<NotificationSettings>(raw.GET('/api/v3/projects/{id}/notification_settings', { params: { path: { id } }, ...asText })),
        update: (params) =>
          json<NotificationSettings>(
            raw.PUT('/api/v3/projects/{id}/notification_settings', { params: { path: { id } }, body: params, ...asText }),
          ),
      }),
    },
  };
}
