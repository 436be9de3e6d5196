// `@tokenbell/sdk/test-helpers`: the document's `test_helpers` area, for test suites. It is an entry of its own, and
// the main entry never imports this module, so an application that does not import it ships none of it (the
// package test bundles the main entry for a browser and looks for these paths).
import { OAuthError } from './errors.js';
import type { components, paths } from './generated/openapi.js';
import { asText, authenticatedClient, type FetchLike, json, noContent, type TokenbellAuth } from './internal.js';
import { calculateCodeChallenge, checkState, exchangeCode, generateCodeVerifier, generateState, type Scope, scopeParam, type TokenResponse } from './oauth.js';

type Schemas = components['schemas'];

export type TestUserRequest = Schemas['TestUserRequest'];
export type TestGroupRequest = Schemas['TestGroupRequest'];
export type TestProjectRequest = Schemas['TestProjectRequest'];
export type TestMembership = Schemas['TestMembership'];
export type TestApplicationRequest = Schemas['TestApplicationRequest'];
export type TestApplication = Schemas['TestApplication'];
export type MintAccessTokenRequest = Schemas['MintAccessTokenRequest'];
export type MintPersonalAccessTokenRequest = Schemas['MintPersonalAccessTokenRequest'];
export type TestPersonalAccessToken = Schemas['TestPersonalAccessToken'];
export type HeadlessAuthorizationRequest = Schemas['HeadlessAuthorizationRequest'];
export type HeadlessAuthorization = Schemas['HeadlessAuthorization'];
export type HeadlessDeviceDecisionRequest = Schemas['HeadlessDeviceDecisionRequest'];
export type HeadlessDeviceDecision = Schemas['HeadlessDeviceDecision'];
export type AutoApproval = Schemas['AutoApproval'];
export type TestClock = Schemas['TestClock'];
export type RecordedRequest = Schemas['RecordedRequest'];
export type RecordedRequestQuery = NonNullable<paths['/api/v3/test_helpers/requests']['get']['parameters']['query']>;
export type FaultRequest = Schemas['FaultRequest'];
export type Fault = Schemas['Fault'];
export type NotificationEventRequest = Schemas['NotificationEventRequest'];
export type NotificationEventResult = Schemas['NotificationEventResult'];
export type NotificationMessage = Schemas['NotificationMessage'];
export type NotificationMessageQuery = NonNullable<paths['/api/v3/test_helpers/notification_messages']['get']['parameters']['query']>;

export type TokenbellTestHelpersOptions = {
  /** The instance, as for `createTokenbellClient`; it must run with test helpers on (`--test-helpers`). */
  baseUrl: string;
  /** A `fetch` to use instead of `globalThis.fetch`. */
  fetch?: FetchLike;
} & (
  | {
      /** An administrator's personal access token, sent as `PRIVATE-TOKEN`: the area answers administrators only. */
      token: string;
    }
  | {
      /** Credentials as `createTokenbellClient` takes them, for an administrator's OAuth access token. */
      auth: TokenbellAuth;
    }
);

/**
 * One method per operation of the `test_helpers` tag, named for what a test does with it; the operationId in each
 * comment leads to the document, which says what the operation does and refuses. Every method throws the main
 * entry's error classes: `TokenbellValidationError` with the server's `message` for a 400, `TokenbellPermissionError`
 * for a user who is not an administrator, `TokenbellNotFoundError` for an instance without test helpers.
 */
export interface TokenbellTestHelpers {
  /** createTestUser. */
  createUser(user: TestUserRequest): Promise<Schemas['User']>;
  /** createTestGroup. */
  createGroup(group: TestGroupRequest): Promise<Schemas['Group']>;
  /** createTestProject. */
  createProject(project: TestProjectRequest): Promise<Schemas['Project']>;
  /** setTestMembership: replaces the user's membership of that group or project, if any. */
  setMembership(membership: TestMembership): Promise<TestMembership>;
  /** createTestApplication: the answer is the only place the App Secret shows. */
  createApplication(application: TestApplicationRequest): Promise<TestApplication>;
  /** mintAccessToken: tokens as the token endpoint answers them, without the browser. */
  mintAccessToken(request: MintAccessTokenRequest): Promise<Schemas['TokenResponse']>;
  /** mintPersonalAccessToken. */
  mintPersonalAccessToken(request: MintPersonalAccessTokenRequest): Promise<TestPersonalAccessToken>;
  /** authorizeHeadlessly: the redirect the authorization endpoint would answer, with its code or error read out. */
  authorize(request: HeadlessAuthorizationRequest): Promise<HeadlessAuthorization>;
  /** decideDeviceAuthorizationHeadlessly: approves or denies a device's code as the named user, without the pages. */
  decideDeviceAuthorization(request: HeadlessDeviceDecisionRequest): Promise<HeadlessDeviceDecision>;
  /** getAutoApproval. */
  autoApproval(): Promise<AutoApproval>;
  /** setAutoApproval: `null` stops it. */
  setAutoApproval(username: string | null): Promise<AutoApproval>;
  /** getTestClock. */
  clock(): Promise<TestClock>;
  /** advanceTestClock. */
  advanceClock(seconds: number): Promise<TestClock>;
  /** resetTestState: refused (400) on a shared database. */
  reset(): Promise<void>;
  /** listRecordedRequests. */
  requests(query?: RecordedRequestQuery): Promise<RecordedRequest[]>;
  /** clearRecordedRequests. */
  clearRequests(): Promise<void>;
  /** listFaults. */
  faults(): Promise<Fault[]>;
  /** queueFault. */
  queueFault(fault: FaultRequest): Promise<Fault>;
  /** clearFaults. */
  clearFaults(): Promise<void>;
  /** emitNotificationEvent: `project` is an id or an unencoded full path, as in the main client. */
  emitNotificationEvent(project: Schemas['GroupOrProjectId'], event: NotificationEventRequest): Promise<NotificationEventResult>;
  /** listNotificationMessages. */
  notificationMessages(query?: NotificationMessageQuery): Promise<NotificationMessage[]>;
}

/**
 * Creates the test helpers for an instance running with test helpers on.
 *
 * @example
 * ```ts
 * const helpers = createTokenbellTestHelpers({ baseUrl: 'http://127.0.0.1:3000', token: adminToken });
 * await helpers.reset();
 * const app = await helpers.createApplication({ name: 'under test', owner: 'root', redirect_uris: ['http://localhost/cb'] });
 * ```
 */
export function createTokenbellTestHelpers(options: TokenbellTestHelpersOptions): TokenbellTestHelpers {
  const auth: TokenbellAuth = 'token' in options ? { privateToken: options.token } : options.auth;
  const raw = authenticatedClient(options.baseUrl, options.fetch, () => auth);

  return {
    createUser: (body) => json(raw.POST('/api/v3/test_helpers/users', { body, ...asText })),
    createGroup: (body) => json(raw.POST('/api/v3/test_helpers/groups', { body, ...asText })),
    createProject: (body) => json(raw.POST('/api/v3/test_helpers/projects', { body, ...asText })),
    setMembership: (body) => json(raw.PUT('/api/v3/test_helpers/memberships', { body, ...asText })),
    createApplication: (body) => json(raw.POST('/api/v3/test_helpers/applications', { body, ...asText })),
    mintAccessToken: (body) => json(raw.POST('/api/v3/test_helpers/oauth_tokens', { body, ...asText })),
    mintPersonalAccessToken: (body) => json(raw.POST('/api/v3/test_helpers/personal_access_tokens', { body, ...asText })),
    authorize: (body) => json(raw.POST('/api/v3/test_helpers/authorizations', { body, ...asText })),
    decideDeviceAuthorization: (body) => json(raw.POST('/api/v3/test_helpers/device_authorizations', { body, ...asText })),
    autoApproval: () => json(raw.GET('/api/v3/test_helpers/auto_approval', asText)),
    setAutoApproval: (username) => json(raw.PUT('/api/v3/test_helpers/auto_approval', { body: { username }, ...asText })),
    clock: () => json(raw.GET('/api/v3/test_helpers/clock', asText)),
    advanceClock: (seconds) => json(raw.POST('/api/v3/test_helpers/clock', { body: { seconds }, ...asText })),
    reset: () => noContent(raw.POST('/api/v3/test_helpers/reset', asText)),
    requests: (query = {}) => json(raw.GET('/api/v3/test_helpers/requests', { params: { query }, ...asText })),
    clearRequests: () => noContent(raw.DELETE('/api/v3/test_helpers/requests', asText)),
    faults: () => json(raw.GET('/api/v3/test_helpers/faults', asText)),
    queueFault: (body) => json(raw.POST('/api/v3/test_helpers/faults', { body, ...asText })),
    clearFaults: () => noContent(raw.DELETE('/api/v3/test_helpers/faults', asText)),
    // openapi-fetch encodes path parameters, so 'acme/widgets' goes out as acme%2Fwidgets.
    emitNotificationEvent: (id, body) =>
      json(raw.POST('/api/v3/test_helpers/projects/{id}/notification_events', { params: { path: { id } }, body, ...asText })),
    notificationMessages: (query = {}) => json(raw.GET('/api/v3/test_helpers/notification_messages', { params: { query }, ...asText })),
  };
}

export interface SignInOptions {
  /** The instance, whose token endpoint exchanges the code. */
  baseUrl: string;
  username: string;
  /** The application's App ID. */
  clientId: string;
  /** Its App Secret, for a confidential application; a public one has none and is held to PKCE alone. */
  clientSecret?: string | undefined;
  /** One of the application's redirect URIs. */
  redirectUri: string;
  /** The scopes to ask for; the application's when not given. */
  scopes?: Scope | undefined;
  /** A `fetch` to use instead of `globalThis.fetch`, for the token request. */
  fetch?: FetchLike | undefined;
}

/**
 * Signs a user in to an application as the application's own login code would, without a browser: an authorization
 * request with PKCE (S256) and a fresh state, approved as the user by the `authorize` helper, the state checked as a
 * callback checks it, and the code exchanged at the token endpoint with the verifier (and the secret, if any).
 * Answers the tokens (with an id_token when `openid` is asked). For a test of the redirect itself (a refused scope,
 * the state) call `authorize` instead.
 * @throws {@link OAuthError} with the error the redirect carried (`invalid_scope`, ...), or the token endpoint's.
 */
export async function signIn(helpers: Pick<TokenbellTestHelpers, 'authorize'>, options: SignInOptions): Promise<TokenResponse> {
  const codeVerifier = generateCodeVerifier();
  const state = generateState();
  const scope = scopeParam(options.scopes);
  const answer = await helpers.authorize({
    username: options.username,
    client_id: options.clientId,
    redirect_uri: options.redirectUri,
    ...(scope === undefined ? {} : { scope }),
    state,
    code_challenge: await calculateCodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
  });
  if (answer.error !== null) throw new OAuthError({ error: answer.error as OAuthError['error'], state: answer.state ?? undefined });
  if (!checkState(answer.state, state)) throw new OAuthError({ error: 'invalid_request', error_description: 'the redirect came back with another state' });
  const client = options.clientSecret === undefined ? { clientId: options.clientId } : { clientId: options.clientId, clientSecret: options.clientSecret };
  return exchangeCode({ baseUrl: options.baseUrl, ...(options.fetch ? { fetch: options.fetch } : {}), code: answer.code, redirectUri: options.redirectUri, codeVerifier, ...client });
}
