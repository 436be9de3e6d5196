// The contract cases: one table, every operation of openapi/openapi.yaml with its success and documented error
// answers, each made through @tokenbell/sdk. The runner (contract.test.ts) plays every case against the reference
// server, the Prism mock and the server behind Prism's validating proxy, checks the status and validates the body
// against the document; `expect` adds what every target must show, `behaviour` what only a real server can.
import { calculateJwkThumbprint } from 'jose';
import { expect } from 'vitest';
import {
  authorizationUrl,
  callbackParams,
  checkState,
  createTokenbellClient,
  exchangeCode,
  OAuthError,
  passwordGrant,
  pollDeviceToken,
  refresh,
  revoke,
  startDeviceAuthorization,
  TokenbellApiError,
  TokenbellAuthenticationError,
  TokenbellNotFoundError,
  TokenbellPermissionError,
  TokenbellValidationError,
  type FetchLike,
  type NotificationSettingsUpdate,
  type GlobalNotificationSettingsUpdate,
  type TokenbellAuth,
  type TokenbellClient,
} from '../../packages/sdk/src/index.js';
import {
  createTokenbellTestHelpers,
  type Fault,
  type FaultRequest,
  type NotificationEventRequest,
  type NotificationEventResult,
  type NotificationMessage,
  type RecordedRequest,
  type TestClock,
  type TokenbellTestHelpers,
} from '../../packages/sdk/src/test-helpers.js';
import type { TokenResponse } from '../../packages/sdk/src/index.js';
import { currentCode } from '../../packages/server/test/support/two-factor.js';
import { type CaseContext, exampleApp, type Exchange, publicApp, type Session, users } from './context.js';
import { boundedJsonBodies, deviceFloodCase, paddedBodyCase } from './not-applicable.js';

/**
 * A reference server of its own that a case's subject request needs, on the server target directly and on the proxy
 * target behind a proxy of its own (contract.test.ts): `restricted`, whose monitoring allowlist leaves loopback out
 * and which runs without test helpers, for the 404s of what an instance can leave out; `disposable`, with test
 * helpers like the suite's own server, for the cases that reset an instance or move its clock, which would take the
 * suite's server from under every later case. The mock answers what Prefer asks whatever the instance.
 */
export type Instance = 'restricted' | 'disposable';

export interface ContractCase {
  name: string;
  /** The operationId the subject request must hit. */
  operation: string;
  /** The status the subject request must get; on the mock it is asked for with `Prefer: code=...`. */
  status: number;
  /** The named example of that response to ask the mock for (`Prefer: example=...`). */
  mockExample?: string;
  /**
   * Why the request breaks the document on purpose (to reach the server's own 400, say). The mock must flag it as
   * a violation, and on the proxy target it goes through the proxy started with --validate-request=false, since
   * `--errors` answers an invalid request itself and never forwards it.
   */
  invalidRequest?: string;
  /** The server of its own the subject request goes to, if any (setup still goes to the target's usual one). */
  instance?: Instance;
  /**
   * Setup through ctx.setup, then exactly one request through ctx.fetch / ctx.client() (the subject); what it
   * answers is handed to `behaviour`.
   */
  call(ctx: CaseContext): Promise<unknown>;
  /** Holds on every target, the mock's examples included. */
  expect?(exchange: Exchange, ctx: CaseContext): void;
  /** What only a real server does (state, echoed values); checked on the server and proxy targets. */
  behaviour?(exchange: Exchange, ctx: CaseContext, result: unknown): void | Promise<void>;
}

const forged = 'forged-csrf-token-not-from-this-session';
const unknownToken = 'tba_not-a-token-this-server-ever-issued-000';
const location = (exchange: Exchange) => exchange.headers.get('location') ?? '';
const pathOf = (exchange: Exchange) => new URL(location(exchange), exchange.url).pathname;

/** Options for a form post from a browser session through client.raw. */
const formOf = (session: Pick<Session, 'cookie'>) =>
  ({ headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: session.cookie }, parseAs: 'text' }) as const;
const withCookie = (session: Pick<Session, 'cookie'>) => ({ headers: { Cookie: session.cookie }, parseAs: 'text' }) as const;
/** A cookie naming no session the server knows: the request satisfies the security scheme but nobody is signed in. */
const staleSession = { cookie: 'tokenbell.sid=s%3Acontract-suite-no-such-session.signature' };

const rejectsWith = async (pending: Promise<unknown>, type: abstract new (...args: never[]) => Error, fields: Record<string, unknown> = {}) => {
  const error = await pending.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(type);
  expect(error).toMatchObject(fields);
};

const htmlPage = (exchange: Exchange) => {
  expect(exchange.contentType).toBe('text/html');
  expect(exchange.text).toMatch(/^<!doctype html>/i);
};
const redirectsTo = (path: string) => (exchange: Exchange) => expect(pathOf(exchange)).toBe(path);

const events = {
  new_note: true,
  new_issue: false,
  reopen_issue: false,
  close_issue: false,
  reassign_issue: false,
  new_merge_request: true,
  reopen_merge_request: false,
  close_merge_request: false,
  reassign_merge_request: false,
  merge_merge_request: false,
  failed_pipeline: true,
  success_pipeline: false,
};

/** The test helpers on the subject channel, as ctx.client() is the client on it. */
const testHelpers = (ctx: CaseContext, auth: TokenbellAuth): TokenbellTestHelpers => createTokenbellTestHelpers({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, auth });
const asRoot = { privateToken: users.root.pat };
/**
 * The test helpers and the client as the seed's administrator on the case's own instance (ContractCase.instance),
 * outside the subject channel: ctx.setup talks to the target's usual server, and a `disposable` case shapes and reads
 * the instance it resets or moves the clock of. On the proxy target they go through that instance's proxy.
 */
const onInstance = (ctx: CaseContext) => createTokenbellTestHelpers({ baseUrl: ctx.baseUrl, auth: asRoot });
const clientOnInstance = (ctx: CaseContext, auth: TokenbellAuth) => createTokenbellClient({ baseUrl: ctx.baseUrl, auth });
/** A name no earlier run or case has taken (the targets' servers are fresh, but a case may run on two of them). */
const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
/** A path no request of the suite ever goes to: faults queued for it answer nothing. */
const neverRequested = '/contract-suite/never-requested';
const idleFault: FaultRequest = { match: { method: 'DELETE', path: neverRequested }, answer: { status: 503 } };

/**
 * The test-helper area's operations (issue 19), each with a valid request for the rows every one of them documents:
 * 401, 403 (for the scope, and for a user who is not an administrator), 404 on an instance without test helpers, and
 * the 413 of those whose body is bounded. Every one of these is refused before it acts; even carried out, each but the
 * reset would change nothing the later cases rely on.
 */
const testHelperCalls: { operation: string; scope: 'read_api' | 'api'; call(helpers: TokenbellTestHelpers): Promise<unknown> }[] = [
  {
    operation: 'createTestUser',
    scope: 'api',
    call: (h) => h.createUser({ username: 'contract-refused', email: 'contract-refused@example.com', name: 'Refused', password: 'contract-suite-password' }),
  },
  { operation: 'createTestGroup', scope: 'api', call: (h) => h.createGroup({ path: 'contract-refused', name: 'Refused' }) },
  { operation: 'createTestProject', scope: 'api', call: (h) => h.createProject({ namespace: 'acme', path: 'contract-refused', name: 'Refused' }) },
  // Carried out, it would be refused too: the project does not exist.
  { operation: 'setTestMembership', scope: 'api', call: (h) => h.setMembership({ username: 'mallory', project: 'contract-suite/no-such-project', access_level: 10 }) },
  { operation: 'createTestApplication', scope: 'api', call: (h) => h.createApplication({ name: 'Refused', owner: 'jsmith', redirect_uris: ['https://app.example.com/callback'] }) },
  { operation: 'mintAccessToken', scope: 'api', call: (h) => h.mintAccessToken({ username: 'jsmith', client_id: exampleApp.clientId, scopes: ['read_user'] }) },
  { operation: 'mintPersonalAccessToken', scope: 'api', call: (h) => h.mintPersonalAccessToken({ username: 'mallory', name: 'refused', scopes: ['read_user'] }) },
  { operation: 'authorizeHeadlessly', scope: 'api', call: (h) => h.authorize({ username: 'jsmith', client_id: exampleApp.clientId, redirect_uri: exampleApp.redirectUri }) },
  // Carried out, it would be refused too: no device shows this code.
  { operation: 'decideDeviceAuthorizationHeadlessly', scope: 'api', call: (h) => h.decideDeviceAuthorization({ user_code: 'ZZZZ-ZZZ1', username: 'jsmith', decision: 'deny' }) },
  { operation: 'getAutoApproval', scope: 'read_api', call: (h) => h.autoApproval() },
  { operation: 'setAutoApproval', scope: 'api', call: (h) => h.setAutoApproval(null) },
  { operation: 'getTestClock', scope: 'read_api', call: (h) => h.clock() },
  // One second: even carried out, it would move no expiry a later case meets.
  { operation: 'advanceTestClock', scope: 'api', call: (h) => h.advanceClock(1) },
  // Carried out, it would take the suite's server back to its seed; it takes no body, so it has no 413 row.
  { operation: 'resetTestState', scope: 'api', call: (h) => h.reset() },
  { operation: 'listRecordedRequests', scope: 'read_api', call: (h) => h.requests() },
  { operation: 'clearRecordedRequests', scope: 'api', call: (h) => h.clearRequests() },
  { operation: 'listFaults', scope: 'read_api', call: (h) => h.faults() },
  { operation: 'queueFault', scope: 'api', call: (h) => h.queueFault(idleFault) },
  { operation: 'clearFaults', scope: 'api', call: (h) => h.clearFaults() },
];

/**
 * The API operations that take a token, for the 401/403 rows every one of them documents. The 403 is asked as jsmith
 * with one scope too few, or, for the test helpers, which answer only administrators, as the seed's administrator, so
 * that the scope alone refuses it (their refusal of anyone else has cases of its own).
 */
const apiOperations: {
  operation: string;
  scope: 'read_user' | 'read_api' | 'api';
  as?: 'root';
  call(client: TokenbellClient, helpers: TokenbellTestHelpers): Promise<unknown>;
}[] = [
  { operation: 'getCurrentUser', scope: 'read_user', call: (c) => c.user.current() },
  { operation: 'getUser', scope: 'read_user', call: (c) => c.users.get(1) },
  { operation: 'getGlobalNotificationSettings', scope: 'read_api', call: (c) => c.notificationSettings.global.get() },
  { operation: 'updateGlobalNotificationSettings', scope: 'api', call: (c) => c.notificationSettings.global.update({ level: 'watch' }) },
  { operation: 'getGroup', scope: 'read_api', call: (c) => c.groups.get('acme') },
  { operation: 'listGroups', scope: 'read_api', call: (c) => c.groups.list() },
  { operation: 'listProjects', scope: 'read_api', call: (c) => c.projects.list() },
  { operation: 'getGroupMember', scope: 'read_api', call: (c) => c.groups.member('acme', 1) },
  { operation: 'getProjectMember', scope: 'read_api', call: (c) => c.projects.member('acme/widgets', 1) },
  { operation: 'getProject', scope: 'read_api', call: (c) => c.projects.get('acme/widgets') },
  { operation: 'getGroupNotificationSettings', scope: 'read_api', call: (c) => c.notificationSettings.group('acme').get() },
  { operation: 'updateGroupNotificationSettings', scope: 'api', call: (c) => c.notificationSettings.group('acme').update({ level: 'watch' }) },
  { operation: 'getProjectNotificationSettings', scope: 'read_api', call: (c) => c.notificationSettings.project('acme/widgets').get() },
  { operation: 'updateProjectNotificationSettings', scope: 'api', call: (c) => c.notificationSettings.project('acme/widgets').update({ level: 'watch' }) },
  {
    operation: 'emitNotificationEvent',
    scope: 'api',
    as: 'root',
    call: (_c, h) => h.emitNotificationEvent('acme/widgets', { kind: 'failed_pipeline', title: 'Refused', author: 'jsmith' }),
  },
  { operation: 'listNotificationMessages', scope: 'read_api', as: 'root', call: (_c, h) => h.notificationMessages() },
  ...testHelperCalls.map(({ operation, scope, call }) => ({ operation, scope, as: 'root' as const, call: (_c: TokenbellClient, h: TokenbellTestHelpers) => call(h) })),
];
/** One scope too few for each required scope. */
// An OpenID Connect token has none of the API's scopes, so even the current user is refused it, as on the service.
const tooLittle = { read_user: 'openid', read_api: 'read_user', api: 'read_api' } as const;

/**
 * A body past the reference server's 100 kB limit for the operations whose document cannot tell a large body from a
 * small one: padding the document cannot object to (empty `&` pairs in the token endpoint's open forms), or, for the
 * forms that allow no other field and cap every field so that no valid body reaches 100 kB, padding that breaks the
 * document on purpose. openapi-fetch serialises a body from its fields, so these go out through the case's fetch.
 * The application form and the JSON updates can be large and valid; their cases below go through the SDK.
 */
const oversized: {
  operation: string;
  method: 'POST';
  path: string;
  form: Record<string, string>;
  credentials: 'client' | 'session' | 'none';
  /** Why the padded body breaks the document, for forms that allow no other field. */
  invalid?: string;
}[] = [
  { operation: 'createToken', method: 'POST', path: '/oauth/token', form: { grant_type: 'password', username: 'jsmith', password: 'not-checked' }, credentials: 'none' },
  { operation: 'authorizeDevice', method: 'POST', path: '/oauth/authorize_device', form: { client_id: 'not-checked' }, credentials: 'none' },
  { operation: 'revokeToken', method: 'POST', path: '/oauth/revoke', form: { token: unknownToken }, credentials: 'client' },
  { operation: 'introspectToken', method: 'POST', path: '/oauth/introspect', form: { token: unknownToken }, credentials: 'client' },
  ...(
    [
      ['decideAuthorization', '/oauth/authorize', { client_id: 'x', redirect_uri: 'https://app.example.com/cb', response_type: 'code', decision: 'approve' }],
      ['signIn', '/users/sign_in', { login: 'jsmith', password: 'not-checked' }],
      ['signOut', '/users/sign_out', {}],
      ['confirmDeviceAuthorization', '/oauth/device/confirm', { user_code: 'ZZZZ-ZZZ2' }],
      ['decideDeviceAuthorization', '/oauth/device', { user_code: 'ZZZZ-ZZZ2', decision: 'deny' }],
      ['deleteApplication', '/profile/applications/7/delete', {}],
      ['revokeAuthorizedApplication', '/profile/authorized_applications/7/revoke', {}],
      ['revokePasswordGrantAuthorization', '/profile/authorized_applications/password_grant/revoke', {}],
      ['createPersonalAccessToken', '/profile/personal_access_tokens', { name: 'padded' }],
      ['revokePersonalAccessToken', '/profile/personal_access_tokens/4/revoke', {}],
    ] as const
  ).map(([operation, path, fields]) => ({
    operation,
    method: 'POST' as const,
    path,
    form: { _csrf: forged, ...fields },
    credentials: 'session' as const,
    invalid: 'the form allows no field but its own, so the padding (empty pairs) is one more',
  })),
];
const oversize = 110_000;

/**
 * A valid update past 100 kB: the update schemas allow fields of later releases, which the server ignores, so one
 * long one pads the body through the SDK's own calls. (Whitespace would not do: Prism's proxy parses a JSON body and
 * forwards it serialised again, so only a field reaches the server whole.) A variable, not a literal: the SDK's types
 * name today's fields only.
 */
const paddedUpdate: { level: 'watch'; from_a_later_release: string } = { level: 'watch', from_a_later_release: 'x'.repeat(oversize) };
const oversizedUpdates: { operation: string; call(client: TokenbellClient): Promise<unknown> }[] = [
  { operation: 'updateGlobalNotificationSettings', call: (c) => c.notificationSettings.global.update(paddedUpdate) },
  { operation: 'updateGroupNotificationSettings', call: (c) => c.notificationSettings.group('acme').update(paddedUpdate) },
  { operation: 'updateProjectNotificationSettings', call: (c) => c.notificationSettings.project('acme/widgets').update(paddedUpdate) },
];

/**
 * A valid event past 100 kB, padded the same way: NotificationEventRequest allows fields of later releases too. Were it
 * read, it would mail jsmith (a failed pipeline goes to its user).
 */
const paddedEvent: NotificationEventRequest & { from_a_later_release: string } = {
  kind: 'failed_pipeline',
  title: 'Pipeline #43 failed on main',
  author: 'jsmith',
  from_a_later_release: 'x'.repeat(oversize),
};

/**
 * The SDK's own request with its JSON body padded past 100 kB on the way out, for the test helpers whose every valid
 * body is small (not-applicable.ts, boundedJsonBodies): with whitespace after the body, which leaves it valid, or with
 * one field more, which the schemas (additionalProperties: false) do not allow.
 */
const paddedBody =
  (fetch: FetchLike, padding: 'whitespace' | 'field'): FetchLike =>
  async (request) => {
    const body = await request.text();
    const padded = padding === 'whitespace' ? `${body}${' '.repeat(oversize)}` : JSON.stringify({ ...(JSON.parse(body) as object), from_a_later_release: 'x'.repeat(oversize) });
    return fetch(new Request(request, { body: padded }));
  };

/**
 * Valid bodies past 100 kB for the test helpers whose arrays allow it: 100 members named at their maxLength (255 code
 * points) in a 4-byte character, about 105 kB; 20 redirect URIs of 2,048 code points, about 160 kB.
 */
const wide = (n: number) => '\u{1D11E}'.repeat(n);
const widestMembers = Array.from({ length: 100 }, () => ({ username: wide(255), access_level: 30 as const }));
const widestRedirectUris = Array.from({ length: 20 }, () => `https://app.example.com/${wide(2048 - 'https://app.example.com/'.length)}`);
const largeBodies: { operation: string; call(helpers: TokenbellTestHelpers): Promise<unknown> }[] = [
  { operation: 'createTestGroup', call: (h) => h.createGroup({ path: 'contract-oversized', name: 'Oversized', members: widestMembers }) },
  { operation: 'createTestProject', call: (h) => h.createProject({ namespace: 'acme', path: 'contract-oversized', name: 'Oversized', members: widestMembers }) },
  { operation: 'createTestApplication', call: (h) => h.createApplication({ name: 'Oversized', owner: 'jsmith', redirect_uris: widestRedirectUris }) },
];

/** The ids of the messages listed, to compare two listings whose delivery statuses may have moved on in between. */
const idsOf = (messages: NotificationMessage[]) => messages.map((m) => m.id);

/**
 * The application form at its largest: `_csrf`, `name` and `redirect_uri` each at their maxLength (256, 255 and
 * 8192 characters, counted as code points) in a 4-byte character, which percent-encodes to 12 bytes: about 103 kB
 * of valid form, past the 100 kB limit. The redirect URIs are absolute, one per line, as the form asks.
 */
function largestApplicationForm(): { _csrf: string; name: string; redirect_uri: string; scopes: 'read_user' } {
  const prefix = 'https://app.example.com/';
  const uris = 4;
  const each = Math.floor((8192 - (uris - 1)) / uris);
  const redirectUri = Array.from({ length: uris }, () => prefix + wide(each - prefix.length)).join('\n');
  return { _csrf: wide(256), name: wide(255), redirect_uri: redirectUri, scopes: 'read_user' };
}
const throttledLogin = 'contract-suite-throttled-login';
const deviceGrant = 'urn:ietf:params:oauth:grant-type:device_code';
/** A device code poll of the token endpoint through the raw client, which answers whatever the endpoint says. */
const pollOnce = (ctx: CaseContext, deviceCode: string, client: Record<string, string> = { client_id: publicApp.clientId }) =>
  ctx.client().raw.POST('/oauth/token', {
    body: { grant_type: deviceGrant, device_code: deviceCode, ...client } as never,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    parseAs: 'text',
  });
const expectOAuthError = (error: string) => (x: Exchange) => expect(x.json).toMatchObject({ error });

export const cases: ContractCase[] = [
  // --- OAuth: metadata ---------------------------------------------------------------------------------------
  {
    name: 'server metadata lists the endpoints, grants and PKCE method',
    operation: 'getAuthorizationServerMetadata',
    status: 200,
    async call(ctx) {
      await ctx.client().raw.GET('/.well-known/oauth-authorization-server');
    },
    expect: (x) => expect(x.json).toMatchObject({ response_types_supported: ['code'], code_challenge_methods_supported: ['S256'] }),
    behaviour: (x) => {
      expect(x.json).toMatchObject({ grant_types_supported: ['authorization_code', 'password', 'refresh_token', deviceGrant] });
      expect(new URL((x.json as { device_authorization_endpoint: string }).device_authorization_endpoint).pathname).toBe('/oauth/authorize_device');
    },
  },

  {
    name: 'the JWK set publishes the signing key, public members only, cacheable for ten minutes',
    operation: 'getJsonWebKeySet',
    status: 200,
    async call(ctx) {
      await ctx.client().raw.GET('/oauth/discovery/keys');
    },
    expect: (x) => {
      expect(x.headers.get('cache-control')).toBe('public, max-age=600');
      expect(x.json).toMatchObject({ keys: [{ kty: 'RSA', e: 'AQAB', use: 'sig', alg: 'RS256' }] });
    },
    // The kid is the RFC 7638 thumbprint of the key the server made, recomputed here.
    behaviour: async (x) => {
      const [key] = (x.json as { keys: Array<{ kty: 'RSA'; kid: string; n: string; e: string }> }).keys;
      expect(key!.kid).toBe(await calculateJwkThumbprint({ kty: key!.kty, n: key!.n, e: key!.e }, 'sha256'));
    },
  },

  // --- OpenID Connect: discovery and userinfo ----------------------------------------------------------------------
  {
    name: 'OpenID discovery lists userinfo, the keys, RS256 and the claims',
    operation: 'getOpenIdConfiguration',
    status: 200,
    async call(ctx) {
      await ctx.client().raw.GET('/.well-known/openid-configuration');
    },
    expect: (x) => expect(x.json).toMatchObject({ subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'] }),
    behaviour: (x) => expect(x.json).toMatchObject({ scopes_supported: expect.arrayContaining(['openid', 'profile', 'email']), claims_supported: expect.arrayContaining(['sub', 'groups', 'groups_direct']) }),
  },
  ...(['GET', 'POST'] as const).flatMap((method): ContractCase[] => {
    const operation = method === 'GET' ? 'getUserInfo' : 'postUserInfo';
    const ask = (ctx: CaseContext, accessToken: string) =>
      method === 'GET' ? ctx.client({ accessToken }).raw.GET('/oauth/userinfo') : ctx.client({ accessToken }).raw.POST('/oauth/userinfo');
    return [
      {
        name: `userinfo (${method}) answers the claims of an openid token`,
        operation,
        status: 200,
        async call(ctx) {
          const tokens = await ctx.setup.token(users.jsmith, { client: false, scope: 'openid email' });
          await ask(ctx, tokens.access_token);
        },
        expect: (x) => expect(x.json).toMatchObject({ sub: expect.any(String), email_verified: true }),
        behaviour: (x) => expect(x.json).toMatchObject({ nickname: 'jsmith', email: 'jsmith@example.com', groups: ['acme', 'opensource'] }),
      },
      {
        name: `userinfo (${method}) refuses an unknown token with invalid_token`,
        operation,
        status: 401,
        async call(ctx) {
          await ask(ctx, unknownToken);
        },
        expect: (x) => expect(x.json).toMatchObject({ error: 'invalid_token' }),
        behaviour: (x) => expect(x.headers.get('www-authenticate')).toBe('Bearer realm="tokenbell", error="invalid_token"'),
      },
      {
        name: `userinfo (${method}) refuses a token without openid with insufficient_scope`,
        operation,
        status: 403,
        async call(ctx) {
          const tokens = await ctx.setup.token(users.jsmith, { client: false, scope: 'read_user' });
          await ask(ctx, tokens.access_token);
        },
        expect: (x) => expect(x.json).toMatchObject({ error: 'insufficient_scope' }),
        behaviour: (x) => expect(x.headers.get('www-authenticate')).toMatch(/error="insufficient_scope", scope="openid"/),
      },
    ];
  }),

  // --- OAuth: authorization endpoint ---------------------------------------------------------------------------
  {
    name: 'authorize shows a signed-in user the consent page',
    operation: 'authorize',
    status: 200,
    async call(ctx) {
      const session = await ctx.setup.session(users.jsmith);
      const { url } = await authorizationUrl({ baseUrl: ctx.baseUrl, clientId: exampleApp.clientId, redirectUri: exampleApp.redirectUri, scope: 'api read_user' });
      await ctx.fetch(new Request(url, { headers: { cookie: session.cookie } }));
    },
    expect: (x) => {
      htmlPage(x);
      expect(x.text).toContain('Authorize Example App');
    },
    behaviour: (x) => expect(x.text).toMatch(/name="decision" value="approve"/),
  },
  {
    name: 'authorize sends a user who is not signed in to sign in and back',
    operation: 'authorize',
    status: 302,
    async call(ctx) {
      const { url } = await authorizationUrl({ baseUrl: ctx.baseUrl, clientId: exampleApp.clientId, redirectUri: exampleApp.redirectUri });
      await ctx.fetch(new Request(url));
    },
    expect: (x) => expect(location(x)).not.toBe(''),
    behaviour: (x) => {
      expect(pathOf(x)).toBe('/users/sign_in');
      expect(new URL(location(x), x.url).searchParams.get('return_to')).toMatch(/^\/oauth\/authorize\?/);
    },
  },
  {
    name: 'authorize sends a signed-in user who approved the application for these scopes back with a code and the state at once',
    operation: 'authorize',
    status: 302,
    async call(ctx) {
      // A live token of Example App with exactly the scope asked for. Only read_api: the cases that need the consent
      // page ask for other scopes (all of the application's, or `api read_user`), so this token never skips theirs.
      await ctx.setup.token(users.jsmith, { scope: 'read_api' });
      const session = await ctx.setup.session(users.jsmith);
      // The state of the document's example, which the mock's Location carries.
      const { url } = await authorizationUrl({ baseUrl: ctx.baseUrl, clientId: exampleApp.clientId, redirectUri: exampleApp.redirectUri, scope: 'read_api', state: 'af0ifjsldkj' });
      await ctx.fetch(new Request(url, { headers: { cookie: session.cookie } }));
    },
    expect: (x) => {
      expect(location(x).startsWith(`${exampleApp.redirectUri}?`), location(x)).toBe(true);
      expect(callbackParams(location(x))).toMatchObject({ code: expect.any(String), state: 'af0ifjsldkj' });
    },
  },
  {
    // Example App, the one application the mock knows (the example seed's), served from a dev server on a loopback
    // port of its own: its registered http://127.0.0.1:8080/callback matches any port (RFC 8252 section 7.3).
    name: "a single-page app's sign-in: authorize sends the browser back to the app's redirect_uri with the app's random state and a code the token endpoint exchanges",
    operation: 'authorize',
    status: 302,
    async call(ctx) {
      // Approved before (a live token with exactly this scope), so the server redirects at once, as the mock does.
      await ctx.setup.token(users.jsmith, { scope: 'read_api' });
      const session = await ctx.setup.session(users.jsmith);
      const app = { ...exampleApp, redirectUri: 'http://127.0.0.1:5173/callback' };
      // As the app builds it: a random state and a PKCE pair from the SDK.
      const { url, state, codeVerifier } = await authorizationUrl({ baseUrl: ctx.baseUrl, clientId: app.clientId, redirectUri: app.redirectUri, scope: 'read_api' });
      const response = await ctx.fetch(new Request(url, { headers: { cookie: session.cookie } }));
      const back = response.headers.get('location') ?? '';
      expect(back.startsWith(`${app.redirectUri}?`), back).toBe(true);
      const { code, state: returned } = callbackParams(back);
      expect(checkState(returned, state), `state ${returned}, the app sent ${state}`).toBe(true);
      expect(await ctx.setup.exchange(code, codeVerifier, app)).toMatchObject({ access_token: expect.any(String), token_type: 'bearer' });
    },
  },
  {
    name: 'authorize reports an unsupported code_challenge_method to a signed-in user\'s client by redirect, with the state',
    operation: 'authorize',
    status: 302,
    async call(ctx) {
      const session = await ctx.setup.session(users.jsmith);
      const { url } = await authorizationUrl({ baseUrl: ctx.baseUrl, clientId: exampleApp.clientId, redirectUri: exampleApp.redirectUri, state: 'st-1' });
      const plain = new URL(url);
      plain.searchParams.set('code_challenge_method', 'plain');
      await ctx.fetch(new Request(plain, { headers: { cookie: session.cookie } }));
    },
    behaviour: (x) => {
      expect(location(x).startsWith(exampleApp.redirectUri)).toBe(true);
      expect(() => callbackParams(location(x))).toThrow(expect.objectContaining({ error: 'invalid_request', state: 'st-1' }));
    },
  },
  {
    name: 'authorize answers an unknown client_id with an error page and no redirect',
    operation: 'authorize',
    status: 400,
    async call(ctx) {
      const { url } = await authorizationUrl({ baseUrl: ctx.baseUrl, clientId: 'no-such-client', redirectUri: exampleApp.redirectUri });
      await ctx.fetch(new Request(url));
    },
    expect: (x) => {
      htmlPage(x);
      expect(x.headers.get('location')).toBeNull();
    },
  },
  {
    name: 'approving the consent form redirects with a code and the state',
    operation: 'decideAuthorization',
    status: 302,
    async call(ctx) {
      const session = await ctx.setup.session(users.jsmith);
      const fields = await ctx.setup.consentFields(session, { state: 'approve-me', scope: 'read_user' });
      await ctx.client().raw.POST('/oauth/authorize', { body: { ...fields, decision: 'approve' } as never, ...formOf(session) });
    },
    expect: (x) => expect(callbackParams(location(x)).code).not.toBe(''),
    behaviour: (x) => expect(callbackParams(location(x)).state).toBe('approve-me'),
  },
  {
    name: 'denying the consent form redirects with access_denied and the state',
    operation: 'decideAuthorization',
    status: 302,
    async call(ctx) {
      const session = await ctx.setup.session(users.jsmith);
      const fields = await ctx.setup.consentFields(session, { state: 'deny-me' });
      await ctx.client().raw.POST('/oauth/authorize', { body: { ...fields, decision: 'deny' } as never, ...formOf(session) });
    },
    behaviour: (x) => expect(() => callbackParams(location(x))).toThrow(expect.objectContaining({ error: 'access_denied', state: 'deny-me' })),
  },
  {
    name: 'a consent form naming an unknown client answers an error page',
    operation: 'decideAuthorization',
    status: 400,
    async call(ctx) {
      const session = await ctx.setup.session(users.jsmith);
      const fields = await ctx.setup.consentFields(session);
      await ctx.client().raw.POST('/oauth/authorize', { body: { ...fields, client_id: 'no-such-client', decision: 'approve' } as never, ...formOf(session) });
    },
    expect: htmlPage,
  },
  {
    name: 'a consent form with a forged CSRF token is refused',
    operation: 'decideAuthorization',
    status: 403,
    async call(ctx) {
      const session = await ctx.setup.session(users.jsmith);
      const fields = await ctx.setup.consentFields(session);
      await ctx.client().raw.POST('/oauth/authorize', { body: { ...fields, _csrf: forged, decision: 'approve' } as never, ...formOf(session) });
    },
    expect: htmlPage,
  },

  // --- OAuth: token endpoint -----------------------------------------------------------------------------------
  {
    name: 'exchangeCode trades a code and its PKCE verifier for tokens with a refresh token',
    operation: 'createToken',
    status: 200,
    mockExample: 'authorizationCode',
    async call(ctx) {
      const { code, codeVerifier } = await ctx.setup.code(users.jsmith);
      const tokens = await exchangeCode({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, ...exampleApp, code, codeVerifier });
      expect(tokens.token_type).toBe('bearer');
      expect(tokens.refresh_token).toEqual(expect.any(String));
    },
    expect: (x) => expect(x.headers.get('cache-control')).toBe('no-store'),
  },
  {
    name: 'passwordGrant answers an access token without a refresh token',
    operation: 'createToken',
    status: 200,
    mockExample: 'password',
    async call(ctx) {
      const tokens = await passwordGrant({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, username: users.jsmith.username, password: users.jsmith.password, scope: 'api' });
      expect(tokens.refresh_token).toBeUndefined();
      expect(tokens.scope).toBe('api');
    },
  },
  {
    name: 'refresh answers a new token pair',
    operation: 'createToken',
    status: 200,
    mockExample: 'authorizationCode',
    async call(ctx) {
      const first = await ctx.setup.codeTokens(users.jsmith);
      const renewed = await refresh({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, ...exampleApp, refreshToken: first.refresh_token! });
      expect(renewed.refresh_token).toEqual(expect.any(String));
    },
    async behaviour(x, ctx) {
      const renewed = x.json as { access_token: string };
      expect(await ctx.setup.tokenWorks(renewed.access_token)).toBe(true);
    },
  },
  {
    name: 'exchangeCode for a public client: client_id alone and the PKCE verifier',
    operation: 'createToken',
    status: 200,
    mockExample: 'authorizationCode',
    async call(ctx) {
      const { code, codeVerifier } = await ctx.setup.code(users.jsmith, publicApp);
      const tokens = await exchangeCode({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, ...publicApp, code, codeVerifier });
      expect(tokens.refresh_token).toEqual(expect.any(String));
    },
    expect: (x) => expect(x.headers.get('cache-control')).toBe('no-store'),
    async behaviour(x, ctx) {
      expect(await ctx.setup.tokenWorks((x.json as { access_token: string }).access_token)).toBe(true);
    },
  },
  {
    name: 'refresh for a public client with client_id alone answers a new token pair',
    operation: 'createToken',
    status: 200,
    mockExample: 'authorizationCode',
    async call(ctx) {
      const first = await ctx.setup.codeTokens(users.jsmith, publicApp);
      const renewed = await refresh({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, ...publicApp, refreshToken: first.refresh_token! });
      expect(renewed.refresh_token).toEqual(expect.any(String));
      return first.access_token;
    },
    async behaviour(x, ctx, replaced) {
      expect(await ctx.setup.tokenWorks((x.json as { access_token: string }).access_token)).toBe(true);
      expect(await ctx.setup.tokenWorks(replaced as string)).toBe(false);
    },
  },
  {
    name: 'exchangeCode with a wrong code fails with invalid_grant',
    operation: 'createToken',
    status: 400,
    mockExample: 'invalidGrant',
    async call(ctx) {
      await rejectsWith(exchangeCode({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, ...exampleApp, code: 'not-a-code-this-server-issued' }), OAuthError, {
        error: 'invalid_grant',
        status: 400,
      });
    },
  },
  {
    name: 'passwordGrant for a user with two-factor authentication fails with invalid_grant',
    operation: 'createToken',
    status: 400,
    mockExample: 'invalidGrant',
    async call(ctx) {
      await rejectsWith(passwordGrant({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, username: users.awong.username, password: users.awong.password }), OAuthError, {
        error: 'invalid_grant',
      });
    },
  },
  {
    name: 'a grant type the server does not support fails with unsupported_grant_type',
    operation: 'createToken',
    status: 400,
    mockExample: 'unsupportedGrantType',
    invalidRequest: 'grant_type client_credentials matches none of TokenRequest\'s three shapes',
    async call(ctx) {
      await ctx.client().raw.POST('/oauth/token', {
        body: { grant_type: 'client_credentials', client_id: exampleApp.clientId, client_secret: exampleApp.clientSecret } as never,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
    },
    expect: (x) => expect(x.json).toMatchObject({ error: 'unsupported_grant_type' }),
  },
  {
    name: 'exchangeCode with a wrong client secret fails with invalid_client',
    operation: 'createToken',
    status: 401,
    async call(ctx) {
      const { code, codeVerifier } = await ctx.setup.code(users.jsmith);
      await rejectsWith(exchangeCode({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, ...exampleApp, clientSecret: 'tbcs_wrong-secret-0000000000000000', code, codeVerifier }), OAuthError, {
        error: 'invalid_client',
        status: 401,
      });
    },
    expect: (x) => expect(x.headers.get('cache-control')).toBe('no-store'),
  },

  // --- OAuth: device authorization (RFC 8628) -------------------------------------------------------------------
  {
    name: 'startDeviceAuthorization for a public client answers a device code, a user code and the verification page',
    operation: 'authorizeDevice',
    status: 200,
    async call(ctx) {
      await startDeviceAuthorization({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, clientId: publicApp.clientId, scope: 'read_user' });
    },
    expect: (x) => {
      expect(x.headers.get('cache-control')).toBe('no-store');
      expect(x.json).toMatchObject({ user_code: expect.stringMatching(/^[0-9A-Z]{8}$/), expires_in: 300, interval: 5 });
    },
    behaviour: (x) => {
      const { user_code, verification_uri, verification_uri_complete } = x.json as { user_code: string; verification_uri: string; verification_uri_complete: string };
      // The instance's own base URL: behind the proxy, not the address the request went to.
      expect(new URL(verification_uri).pathname).toBe('/oauth/device');
      expect(verification_uri_complete).toBe(`${verification_uri}?user_code=${user_code}`);
    },
  },
  {
    name: 'startDeviceAuthorization for a confidential client with its secret',
    operation: 'authorizeDevice',
    status: 200,
    async call(ctx) {
      await startDeviceAuthorization({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, ...exampleApp });
    },
  },
  {
    name: 'startDeviceAuthorization with a scope the application lacks fails with invalid_scope',
    operation: 'authorizeDevice',
    status: 400,
    mockExample: 'invalidScope',
    async call(ctx) {
      await rejectsWith(startDeviceAuthorization({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, ...exampleApp, scope: 'openid' }), OAuthError, { error: 'invalid_scope', status: 400 });
    },
    expect: (x) => expect(x.headers.get('cache-control')).toBe('no-store'),
  },
  {
    name: 'startDeviceAuthorization for a confidential client without its secret fails with invalid_client',
    operation: 'authorizeDevice',
    status: 401,
    async call(ctx) {
      await rejectsWith(startDeviceAuthorization({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, clientId: exampleApp.clientId }), OAuthError, { error: 'invalid_client', status: 401 });
    },
  },
  {
    name: 'pollDeviceToken gets tokens with a refresh token once the user approved',
    operation: 'createToken',
    status: 200,
    mockExample: 'authorizationCode',
    async call(ctx) {
      const { device_code } = await ctx.setup.deviceAuthorization(publicApp, { user: users.jsmith, decision: 'approve' });
      // Approved already: the first poll gets the tokens, so the helper need not wait.
      const tokens = await pollDeviceToken({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, clientId: publicApp.clientId, deviceCode: device_code, interval: 5, wait: async () => undefined });
      expect(tokens.refresh_token).toEqual(expect.any(String));
      return device_code;
    },
    expect: (x) => expect(x.headers.get('cache-control')).toBe('no-store'),
    async behaviour(x, ctx, deviceCode) {
      expect(await ctx.setup.tokenWorks((x.json as { access_token: string }).access_token)).toBe(true);
      expect(await ctx.setup.pollDevice(deviceCode as string)).toEqual({ status: 400, error: 'invalid_grant' });
    },
  },
  {
    name: 'a device code nobody has answered yet is authorization_pending',
    operation: 'createToken',
    status: 400,
    mockExample: 'authorizationPending',
    async call(ctx) {
      const { device_code } = await ctx.setup.deviceAuthorization();
      await pollOnce(ctx, device_code);
    },
    expect: expectOAuthError('authorization_pending'),
  },
  {
    name: 'a device that polls again before the interval is told to slow_down',
    operation: 'createToken',
    status: 400,
    mockExample: 'slowDown',
    async call(ctx) {
      const { device_code } = await ctx.setup.deviceAuthorization();
      await ctx.setup.pollDevice(device_code);
      await pollOnce(ctx, device_code);
    },
    expect: expectOAuthError('slow_down'),
  },
  {
    name: 'pollDeviceToken throws access_denied once the user denied',
    operation: 'createToken',
    status: 400,
    mockExample: 'accessDenied',
    async call(ctx) {
      const { device_code } = await ctx.setup.deviceAuthorization(publicApp, { user: users.jsmith, decision: 'deny' });
      await rejectsWith(
        pollDeviceToken({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, clientId: publicApp.clientId, deviceCode: device_code, interval: 5, wait: async () => undefined }),
        OAuthError,
        { error: 'access_denied', status: 400 },
      );
    },
    expect: expectOAuthError('access_denied'),
  },
  {
    name: 'a device code polled after expires_in is expired_token',
    operation: 'createToken',
    status: 400,
    mockExample: 'expiredToken',
    instance: 'disposable',
    async call(ctx) {
      // On the instance whose clock may move: started there, then five minutes on.
      const { device_code, expires_in } = await startDeviceAuthorization({ baseUrl: ctx.baseUrl, clientId: publicApp.clientId });
      await onInstance(ctx).advanceClock(expires_in);
      await pollOnce(ctx, device_code);
    },
    expect: expectOAuthError('expired_token'),
  },
  {
    name: 'polling for a confidential client without its secret fails with invalid_client',
    operation: 'createToken',
    status: 401,
    async call(ctx) {
      const { device_code } = await ctx.setup.deviceAuthorization(exampleApp);
      await pollOnce(ctx, device_code, { client_id: exampleApp.clientId });
    },
    expect: expectOAuthError('invalid_client'),
  },

  // --- OAuth: revocation and introspection ---------------------------------------------------------------------
  {
    name: 'revoke invalidates a token',
    operation: 'revokeToken',
    status: 200,
    async call(ctx) {
      const tokens = await ctx.setup.token(users.jsmith);
      await revoke({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, ...exampleApp, token: tokens.access_token, tokenTypeHint: 'access_token' });
      return tokens.access_token;
    },
    expect: (x) => expect(x.json).toEqual({}),
    async behaviour(_x, ctx, revoked) {
      expect(await ctx.setup.tokenWorks(revoked as string)).toBe(false);
    },
  },
  {
    name: 'revoke answers 200 for a token that never existed',
    operation: 'revokeToken',
    status: 200,
    async call(ctx) {
      await revoke({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, ...exampleApp, token: unknownToken });
    },
  },
  {
    name: 'revoke by a public client with client_id alone invalidates its token pair',
    operation: 'revokeToken',
    status: 200,
    async call(ctx) {
      const tokens = await ctx.setup.codeTokens(users.jsmith, publicApp);
      await revoke({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, ...publicApp, token: tokens.refresh_token!, tokenTypeHint: 'refresh_token' });
      return tokens.access_token;
    },
    expect: (x) => expect(x.json).toEqual({}),
    async behaviour(_x, ctx, accessToken) {
      expect(await ctx.setup.tokenWorks(accessToken as string)).toBe(false);
    },
  },
  {
    name: 'revoking with client credentials both in the body and in HTTP Basic fails with invalid_request',
    operation: 'revokeToken',
    status: 400,
    async call(ctx) {
      await ctx.client().raw.POST('/oauth/revoke', {
        body: { token: unknownToken, client_id: exampleApp.clientId, client_secret: exampleApp.clientSecret },
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Authorization: `Basic ${btoa(`${exampleApp.clientId}:${exampleApp.clientSecret}`)}`,
        },
      });
    },
    behaviour: (x) => expect(x.json).toMatchObject({ error: 'invalid_request' }),
  },
  {
    name: 'revoke with a wrong client secret fails with invalid_client',
    operation: 'revokeToken',
    status: 401,
    async call(ctx) {
      await rejectsWith(revoke({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, ...exampleApp, clientSecret: 'tbcs_wrong-secret-0000000000000000', token: unknownToken }), OAuthError, {
        error: 'invalid_client',
      });
    },
  },
  {
    name: 'introspection describes an active token',
    operation: 'introspectToken',
    status: 200,
    mockExample: 'active',
    async call(ctx) {
      const tokens = await ctx.setup.token(users.jsmith);
      await ctx.client().raw.POST('/oauth/introspect', {
        body: { token: tokens.access_token, client_id: exampleApp.clientId, client_secret: exampleApp.clientSecret },
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
    },
    expect: (x) => expect(x.json).toMatchObject({ active: true, username: 'jsmith', token_type: 'Bearer' }),
  },
  {
    name: 'introspection answers only active: false for an unknown token',
    operation: 'introspectToken',
    status: 200,
    mockExample: 'inactive',
    async call(ctx) {
      await ctx.client().raw.POST('/oauth/introspect', {
        body: { token: unknownToken, client_id: exampleApp.clientId, client_secret: exampleApp.clientSecret },
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
    },
    expect: (x) => expect(x.json).toEqual({ active: false }),
  },
  {
    name: 'introspection with two client authentication methods fails with invalid_request',
    operation: 'introspectToken',
    status: 400,
    async call(ctx) {
      await ctx.client().raw.POST('/oauth/introspect', {
        body: { token: unknownToken, client_id: exampleApp.clientId, client_secret: exampleApp.clientSecret },
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Authorization: `Basic ${btoa(`${exampleApp.clientId}:${exampleApp.clientSecret}`)}`,
        },
      });
    },
    behaviour: (x) => expect(x.json).toMatchObject({ error: 'invalid_request' }),
  },
  {
    name: 'introspection without client authentication fails with invalid_client',
    operation: 'introspectToken',
    status: 401,
    async call(ctx) {
      await ctx.client().raw.POST('/oauth/introspect', { body: { token: unknownToken }, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    },
    expect: (x) => expect(x.json).toMatchObject({ error: 'invalid_client' }),
  },
  {
    name: 'introspection by a public client (client_id alone) fails with invalid_client, even for its own token',
    operation: 'introspectToken',
    status: 401,
    async call(ctx) {
      const tokens = await ctx.setup.codeTokens(users.jsmith, publicApp);
      await ctx.client().raw.POST('/oauth/introspect', {
        body: { token: tokens.access_token, client_id: publicApp.clientId },
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      });
    },
    expect: (x) => expect(x.json).toMatchObject({ error: 'invalid_client' }),
  },
  {
    name: 'token info describes a bearer token in the Authorization header',
    operation: 'getTokenInfo',
    status: 200,
    async call(ctx) {
      const tokens = await ctx.setup.token(users.jsmith, { scope: 'read_api' });
      await ctx.client({ accessToken: tokens.access_token, via: 'header' }).raw.GET('/oauth/token/info');
    },
    behaviour: (x) => expect(x.json).toMatchObject({ scope: ['read_api'], application: { uid: exampleApp.clientId } }),
  },
  {
    name: 'token info reads a token from the access_token query parameter',
    operation: 'getTokenInfo',
    status: 200,
    async call(ctx) {
      const tokens = await ctx.setup.token(users.jsmith, { client: false });
      await ctx.client({ accessToken: tokens.access_token, via: 'query' }).raw.GET('/oauth/token/info');
    },
    behaviour: (x) => expect(x.json).toMatchObject({ scope: ['api'], application: null }),
  },
  {
    name: 'token info refuses an unknown token with invalid_token',
    operation: 'getTokenInfo',
    status: 401,
    async call(ctx) {
      await ctx.client({ accessToken: unknownToken }).raw.GET('/oauth/token/info');
    },
    expect: (x) => expect(x.json).toMatchObject({ error: 'invalid_token' }),
    behaviour: (x) => expect(x.headers.get('www-authenticate')).toMatch(/^Bearer /),
  },

  // --- Pages: sign-in and sign-out -----------------------------------------------------------------------------
  {
    name: 'the sign-in page',
    operation: 'showSignIn',
    status: 200,
    async call(ctx) {
      await ctx.client().raw.GET('/users/sign_in', { params: { query: { return_to: '/profile/personal_access_tokens' } }, parseAs: 'text' });
    },
    expect: htmlPage,
    behaviour: (x) => {
      expect(x.text).toMatch(/name="_csrf" value="[^"]+"/);
      expect(x.text).toContain('name="return_to" value="/profile/personal_access_tokens"');
    },
  },
  {
    name: 'signing in redirects to return_to',
    operation: 'signIn',
    status: 302,
    async call(ctx) {
      const session = await ctx.setup.anonymousSession();
      await ctx.client().raw.POST('/users/sign_in', {
        body: { _csrf: session.csrf, login: users.mallory.username, password: users.mallory.password, return_to: '/profile/personal_access_tokens' },
        ...formOf(session),
      });
    },
    behaviour: (x) => {
      expect(pathOf(x)).toBe('/profile/personal_access_tokens');
      expect(x.headers.getSetCookie().some((c) => c.startsWith('tokenbell.sid='))).toBe(true);
    },
  },
  {
    name: 'the right password of a two-factor account asks for the code',
    operation: 'signIn',
    status: 200,
    async call(ctx) {
      const session = await ctx.setup.anonymousSession();
      await ctx.client().raw.POST('/users/sign_in', { body: { _csrf: session.csrf, login: users.awong.username, password: users.awong.password }, ...formOf(session) });
    },
    expect: htmlPage,
    behaviour: (x) => {
      expect(x.text).toContain('name="otp_attempt"');
      expect(x.text).not.toContain(users.awong.password);
    },
  },
  {
    name: 'the code of a two-factor account completes the sign-in',
    operation: 'signIn',
    status: 302,
    async call(ctx) {
      const session = await ctx.setup.codeStep(users.awong);
      const otp_attempt = currentCode(users.awong.otp_secret, Math.floor(Date.now() / 1000));
      await ctx.client().raw.POST('/users/sign_in', { body: { _csrf: session.csrf, otp_attempt }, ...formOf(session) });
    },
    behaviour: (x) => {
      expect(pathOf(x)).toBe('/profile/applications');
      expect(x.headers.getSetCookie().some((c) => c.startsWith('tokenbell.sid='))).toBe(true);
    },
  },
  {
    name: 'signing in with a wrong password shows the form again',
    operation: 'signIn',
    status: 401,
    async call(ctx) {
      const session = await ctx.setup.anonymousSession();
      await ctx.client().raw.POST('/users/sign_in', { body: { _csrf: session.csrf, login: users.mallory.username, password: 'wrong password' }, ...formOf(session) });
    },
    expect: htmlPage,
    behaviour: (x) => expect(x.text).toContain('Invalid login or password.'),
  },
  {
    name: 'a sign-in form with a forged CSRF token is refused',
    operation: 'signIn',
    status: 403,
    async call(ctx) {
      const session = await ctx.setup.anonymousSession();
      await ctx.client().raw.POST('/users/sign_in', { body: { _csrf: forged, login: users.mallory.username, password: users.mallory.password }, ...formOf(session) });
    },
    expect: htmlPage,
  },
  {
    name: 'signing out redirects to the sign-in page',
    operation: 'signOut',
    status: 302,
    async call(ctx) {
      const session = await ctx.setup.session(users.mallory);
      await ctx.client().raw.POST('/users/sign_out', { body: { _csrf: session.csrf }, ...formOf(session) });
    },
    behaviour: redirectsTo('/users/sign_in'),
  },
  {
    name: 'a sign-out form with a forged CSRF token is refused',
    operation: 'signOut',
    status: 403,
    async call(ctx) {
      const session = await ctx.setup.session(users.mallory);
      await ctx.client().raw.POST('/users/sign_out', { body: { _csrf: forged }, ...formOf(session) });
    },
    expect: htmlPage,
  },

  // --- Pages: device verification (RFC 8628 section 3.3) ---------------------------------------------------------
  {
    name: 'the device page shows a signed-in user the code form, filled in from the link',
    operation: 'showDeviceVerification',
    status: 200,
    async call(ctx) {
      const session = await ctx.setup.session(users.jsmith);
      await ctx.client().raw.GET('/oauth/device', { params: { query: { user_code: 'wdjbmjht' } }, ...withCookie(session) });
    },
    expect: htmlPage,
    behaviour: (x) => {
      expect(x.text).toContain('action="/oauth/device/confirm"');
      expect(x.text).toContain('value="WDJB-MJHT"');
    },
  },
  {
    name: 'the device page sends a visitor who is not signed in to sign in and back, the code kept',
    operation: 'showDeviceVerification',
    status: 302,
    async call(ctx) {
      await ctx.client().raw.GET('/oauth/device', { params: { query: { user_code: 'WDJB-MJHT' } }, parseAs: 'text' });
    },
    expect: (x) => expect(location(x)).not.toBe(''),
    behaviour: (x) => {
      expect(pathOf(x)).toBe('/users/sign_in');
      expect(new URL(location(x), x.url).searchParams.get('return_to')).toBe('/oauth/device?user_code=WDJB-MJHT');
    },
  },
  {
    name: 'a device code typed on the form shows who asks for what, with Authorize and Deny',
    operation: 'confirmDeviceAuthorization',
    status: 200,
    async call(ctx) {
      const session = await ctx.setup.session(users.jsmith);
      const { user_code } = await ctx.setup.deviceAuthorization(exampleApp);
      await ctx.client().raw.POST('/oauth/device/confirm', { body: { _csrf: session.csrf, user_code: user_code.toLowerCase() }, ...formOf(session) });
    },
    expect: htmlPage,
    behaviour: (x) => {
      expect(x.text).toContain('Authorize Example App to use your account?');
      expect(x.text).toMatch(/name="decision" value="deny"/);
    },
  },
  {
    name: 'a device code form posted without a session goes to sign in first',
    operation: 'confirmDeviceAuthorization',
    status: 302,
    async call(ctx) {
      await ctx.client().raw.POST('/oauth/device/confirm', { body: { _csrf: forged, user_code: 'WDJB-MJHT' }, ...formOf(staleSession) });
    },
    behaviour: (x) => {
      expect(pathOf(x)).toBe('/users/sign_in');
      expect(new URL(location(x), x.url).searchParams.get('return_to')).toBe('/oauth/device?user_code=WDJB-MJHT');
    },
  },
  {
    name: 'a device code no device shows is refused on the form again',
    operation: 'confirmDeviceAuthorization',
    status: 400,
    async call(ctx) {
      const session = await ctx.setup.session(users.jsmith);
      await ctx.client().raw.POST('/oauth/device/confirm', { body: { _csrf: session.csrf, user_code: 'ZZZZ-ZZZ3' }, ...formOf(session) });
    },
    expect: htmlPage,
    behaviour: (x) => expect(x.text).toContain('No device is waiting for this code.'),
  },
  {
    name: 'a device code form with a forged CSRF token is refused',
    operation: 'confirmDeviceAuthorization',
    status: 403,
    async call(ctx) {
      const session = await ctx.setup.session(users.jsmith);
      await ctx.client().raw.POST('/oauth/device/confirm', { body: { _csrf: forged, user_code: 'WDJB-MJHT' }, ...formOf(session) });
    },
    expect: htmlPage,
  },
  {
    name: 'authorizing a device lets its next poll get tokens',
    operation: 'decideDeviceAuthorization',
    status: 200,
    async call(ctx) {
      const session = await ctx.setup.session(users.jsmith);
      const { device_code, user_code } = await ctx.setup.deviceAuthorization();
      await ctx.client().raw.POST('/oauth/device', { body: { _csrf: session.csrf, user_code, decision: 'approve' }, ...formOf(session) });
      return device_code;
    },
    expect: htmlPage,
    async behaviour(x, ctx, deviceCode) {
      expect(x.text).toContain('Device connected');
      expect((await ctx.setup.pollDevice(deviceCode as string)).status).toBe(200);
    },
  },
  {
    name: 'denying a device makes its next poll access_denied',
    operation: 'decideDeviceAuthorization',
    status: 200,
    async call(ctx) {
      const session = await ctx.setup.session(users.jsmith);
      const { device_code, user_code } = await ctx.setup.deviceAuthorization();
      await ctx.client().raw.POST('/oauth/device', { body: { _csrf: session.csrf, user_code, decision: 'deny' }, ...formOf(session) });
      return device_code;
    },
    expect: htmlPage,
    async behaviour(x, ctx, deviceCode) {
      expect(x.text).toContain('Device denied');
      expect(await ctx.setup.pollDevice(deviceCode as string)).toEqual({ status: 400, error: 'access_denied' });
    },
  },
  {
    name: 'a device decision posted without a session goes to sign in first',
    operation: 'decideDeviceAuthorization',
    status: 302,
    async call(ctx) {
      await ctx.client().raw.POST('/oauth/device', { body: { _csrf: forged, user_code: 'WDJB-MJHT', decision: 'approve' }, ...formOf(staleSession) });
    },
    behaviour: redirectsTo('/users/sign_in'),
  },
  {
    name: 'a device code answered already cannot be answered again',
    operation: 'decideDeviceAuthorization',
    status: 400,
    async call(ctx) {
      const session = await ctx.setup.session(users.jsmith);
      const { user_code } = await ctx.setup.deviceAuthorization(publicApp, { user: users.jsmith, decision: 'deny' });
      await ctx.client().raw.POST('/oauth/device', { body: { _csrf: session.csrf, user_code, decision: 'approve' }, ...formOf(session) });
    },
    expect: htmlPage,
    behaviour: (x) => expect(x.text).toContain('This code has been answered already.'),
  },
  {
    name: 'a device decision with a forged CSRF token is refused',
    operation: 'decideDeviceAuthorization',
    status: 403,
    async call(ctx) {
      const session = await ctx.setup.session(users.jsmith);
      await ctx.client().raw.POST('/oauth/device', { body: { _csrf: forged, user_code: 'WDJB-MJHT', decision: 'approve' }, ...formOf(session) });
    },
    expect: htmlPage,
  },

  // --- Pages: applications -------------------------------------------------------------------------------------
  {
    name: 'the applications page lists the user\'s applications',
    operation: 'listApplications',
    status: 200,
    async call(ctx) {
      const session = await ctx.setup.session(users.jsmith);
      await ctx.client().raw.GET('/profile/applications', withCookie(session));
    },
    expect: htmlPage,
    behaviour: (x) => expect(x.text).toContain(exampleApp.clientId),
  },
  {
    name: 'the applications page sends a visitor who is not signed in to sign in',
    operation: 'listApplications',
    status: 302,
    async call(ctx) {
      await ctx.client().raw.GET('/profile/applications', { parseAs: 'text' });
    },
    behaviour: redirectsTo('/users/sign_in'),
  },
  {
    name: 'registering an application shows its secret once',
    operation: 'createApplication',
    status: 201,
    async call(ctx) {
      const session = await ctx.setup.session(users.mallory);
      await ctx.client().raw.POST('/profile/applications', {
        body: { _csrf: session.csrf, name: 'Contract App', redirect_uri: 'https://app.example.com/oauth/callback', scopes: 'read_user' },
        ...formOf(session),
      });
    },
    expect: htmlPage,
    behaviour: (x) => expect(x.text).toMatch(/tbcs_/),
  },
  {
    name: 'registering a public application shows its App ID and no secret',
    operation: 'createApplication',
    status: 201,
    async call(ctx) {
      const session = await ctx.setup.session(users.mallory);
      await ctx.client().raw.POST('/profile/applications', {
        body: { _csrf: session.csrf, name: 'Contract SPA', redirect_uri: 'http://127.0.0.1:8080/spa/callback', scopes: 'read_user', confidential: 'false' },
        ...formOf(session),
      });
    },
    expect: htmlPage,
    behaviour: (x) => {
      expect(x.text).toContain('This is a public client: it has no App Secret.');
      expect(x.text).not.toMatch(/tbcs_|id="app-secret"/);
    },
  },
  {
    name: 'registering an application without a session goes to sign in',
    operation: 'createApplication',
    status: 302,
    async call(ctx) {
      await ctx.client().raw.POST('/profile/applications', {
        body: { _csrf: forged, name: 'Contract App', redirect_uri: 'https://app.example.com/oauth/callback' },
        ...formOf(staleSession),
      });
    },
    behaviour: redirectsTo('/users/sign_in'),
  },
  {
    name: 'registering an application with a relative redirect URI shows the form again',
    operation: 'createApplication',
    status: 400,
    async call(ctx) {
      const session = await ctx.setup.session(users.mallory);
      await ctx.client().raw.POST('/profile/applications', { body: { _csrf: session.csrf, name: 'Contract App', redirect_uri: '/callback' }, ...formOf(session) });
    },
    expect: htmlPage,
    behaviour: (x) => expect(x.text).toContain('Redirect URIs'),
  },
  {
    name: 'an application form with a forged CSRF token is refused',
    operation: 'createApplication',
    status: 403,
    async call(ctx) {
      const session = await ctx.setup.session(users.mallory);
      await ctx.client().raw.POST('/profile/applications', {
        body: { _csrf: forged, name: 'Contract App', redirect_uri: 'https://app.example.com/oauth/callback' },
        ...formOf(session),
      });
    },
    expect: htmlPage,
  },
  {
    name: 'deleting one of the user\'s applications redirects to the applications page',
    operation: 'deleteApplication',
    status: 302,
    async call(ctx) {
      const session = await ctx.setup.session(users.mallory);
      const id = await ctx.setup.newApplication(session);
      await ctx.client().raw.POST('/profile/applications/{application_id}/delete', {
        params: { path: { application_id: id } },
        body: { _csrf: session.csrf },
        ...formOf(session),
      });
    },
    behaviour: redirectsTo('/profile/applications'),
  },
  {
    name: 'an application delete form with a forged CSRF token is refused',
    operation: 'deleteApplication',
    status: 403,
    async call(ctx) {
      const session = await ctx.setup.session(users.mallory);
      const id = await ctx.setup.newApplication(session);
      await ctx.client().raw.POST('/profile/applications/{application_id}/delete', { params: { path: { application_id: id } }, body: { _csrf: forged }, ...formOf(session) });
    },
    expect: htmlPage,
  },
  {
    name: 'deleting an application of another user answers not found',
    operation: 'deleteApplication',
    status: 404,
    async call(ctx) {
      // Example App belongs to jsmith; to mallory it does not exist.
      const owner = await ctx.setup.session(users.jsmith);
      const id = await ctx.setup.authorizedApplication(users.jsmith, owner);
      const session = await ctx.setup.session(users.mallory);
      await ctx.client().raw.POST('/profile/applications/{application_id}/delete', { params: { path: { application_id: id } }, body: { _csrf: session.csrf }, ...formOf(session) });
    },
    expect: htmlPage,
  },
  {
    name: 'revoking an authorized application redirects to the applications page',
    operation: 'revokeAuthorizedApplication',
    status: 302,
    async call(ctx) {
      const session = await ctx.setup.session(users.mallory);
      const id = await ctx.setup.authorizedApplication(users.mallory, session);
      await ctx.client().raw.POST('/profile/authorized_applications/{application_id}/revoke', {
        params: { path: { application_id: id } },
        body: { _csrf: session.csrf },
        ...formOf(session),
      });
    },
    behaviour: redirectsTo('/profile/applications'),
  },
  {
    name: 'a revoke-access form with a forged CSRF token is refused',
    operation: 'revokeAuthorizedApplication',
    status: 403,
    async call(ctx) {
      const session = await ctx.setup.session(users.mallory);
      const id = await ctx.setup.authorizedApplication(users.mallory, session);
      await ctx.client().raw.POST('/profile/authorized_applications/{application_id}/revoke', {
        params: { path: { application_id: id } },
        body: { _csrf: forged },
        ...formOf(session),
      });
    },
    expect: htmlPage,
  },
  {
    name: 'revoking an application that holds nothing for the user answers not found',
    operation: 'revokeAuthorizedApplication',
    status: 404,
    async call(ctx) {
      const session = await ctx.setup.session(users.mallory);
      await ctx.client().raw.POST('/profile/authorized_applications/{application_id}/revoke', {
        params: { path: { application_id: 999_999 } },
        body: { _csrf: session.csrf },
        ...formOf(session),
      });
    },
    expect: htmlPage,
  },
  {
    name: 'revoking the password grant tokens redirects to the applications page',
    operation: 'revokePasswordGrantAuthorization',
    status: 302,
    async call(ctx) {
      await ctx.setup.token(users.mallory, { client: false });
      const session = await ctx.setup.session(users.mallory);
      await ctx.client().raw.POST('/profile/authorized_applications/password_grant/revoke', { body: { _csrf: session.csrf }, ...formOf(session) });
    },
    behaviour: redirectsTo('/profile/applications'),
  },
  {
    name: 'a revoke-password-grant form with a forged CSRF token is refused',
    operation: 'revokePasswordGrantAuthorization',
    status: 403,
    async call(ctx) {
      await ctx.setup.token(users.mallory, { client: false });
      const session = await ctx.setup.session(users.mallory);
      await ctx.client().raw.POST('/profile/authorized_applications/password_grant/revoke', { body: { _csrf: forged }, ...formOf(session) });
    },
    expect: htmlPage,
  },
  {
    name: 'revoking the password grant tokens when there are none answers not found',
    operation: 'revokePasswordGrantAuthorization',
    status: 404,
    async call(ctx) {
      const session = await ctx.setup.session(users.mallory);
      await ctx.setup.revokePasswordGrant(session);
      await ctx.client().raw.POST('/profile/authorized_applications/password_grant/revoke', { body: { _csrf: session.csrf }, ...formOf(session) });
    },
    expect: htmlPage,
  },

  // --- Pages: the administrators' notification mail ----------------------------------------------------------------
  {
    name: "the notification mail page shows an administrator the mail queued, with who gets it, why and its status",
    operation: 'listNotificationMail',
    status: 200,
    async call(ctx) {
      await ctx.setup.notificationEvent('acme/widgets', { kind: 'failed_pipeline', title: 'Pipeline #5 failed on the mail page', author: 'jsmith' });
      const session = await ctx.setup.session(users.root);
      await ctx.client().raw.GET('/admin/notification_messages', withCookie(session));
    },
    expect: htmlPage,
    behaviour: (x) => {
      expect(x.text).toContain('Pipeline #5 failed on the mail page');
      expect(x.text).toContain('jsmith &lt;jsmith@example.com&gt;');
    },
  },
  {
    name: 'the notification mail page sends a visitor who is not signed in to sign in',
    operation: 'listNotificationMail',
    status: 302,
    async call(ctx) {
      await ctx.client().raw.GET('/admin/notification_messages', { parseAs: 'text' });
    },
    behaviour: redirectsTo('/users/sign_in'),
  },
  {
    name: 'the notification mail page does not exist for a user who is not an administrator',
    operation: 'listNotificationMail',
    status: 404,
    async call(ctx) {
      const session = await ctx.setup.session(users.jsmith);
      await ctx.client().raw.GET('/admin/notification_messages', withCookie(session));
    },
    expect: htmlPage,
  },

  // --- Pages: personal access tokens ---------------------------------------------------------------------------
  {
    name: 'the personal access tokens page lists tokens without their values',
    operation: 'listPersonalAccessTokens',
    status: 200,
    async call(ctx) {
      const session = await ctx.setup.session(users.jsmith);
      await ctx.client().raw.GET('/profile/personal_access_tokens', withCookie(session));
    },
    expect: htmlPage,
    behaviour: (x) => {
      expect(x.text).toContain('laptop');
      expect(x.text).not.toContain(users.jsmith.pat);
    },
  },
  {
    name: 'the personal access tokens page sends a visitor who is not signed in to sign in',
    operation: 'listPersonalAccessTokens',
    status: 302,
    async call(ctx) {
      await ctx.client().raw.GET('/profile/personal_access_tokens', { parseAs: 'text' });
    },
    behaviour: redirectsTo('/users/sign_in'),
  },
  {
    name: 'creating a personal access token shows its value once',
    operation: 'createPersonalAccessToken',
    status: 201,
    async call(ctx) {
      const session = await ctx.setup.session(users.mallory);
      await ctx.client().raw.POST('/profile/personal_access_tokens', {
        body: { _csrf: session.csrf, name: 'contract', expires_at: '2099-12-31', scopes: 'read_api' },
        ...formOf(session),
      });
    },
    expect: htmlPage,
  },
  {
    name: 'creating a personal access token without a session goes to sign in',
    operation: 'createPersonalAccessToken',
    status: 302,
    async call(ctx) {
      await ctx.client().raw.POST('/profile/personal_access_tokens', { body: { _csrf: forged, name: 'contract' }, ...formOf(staleSession) });
    },
    behaviour: redirectsTo('/users/sign_in'),
  },
  {
    name: 'creating a personal access token with a malformed expiry shows the form again',
    operation: 'createPersonalAccessToken',
    status: 400,
    async call(ctx) {
      const session = await ctx.setup.session(users.mallory);
      await ctx.client().raw.POST('/profile/personal_access_tokens', { body: { _csrf: session.csrf, name: 'contract', expires_at: 'next week' }, ...formOf(session) });
    },
    expect: htmlPage,
    behaviour: (x) => expect(x.text).toContain('Expires at'),
  },
  {
    name: 'a personal access token form with a forged CSRF token is refused',
    operation: 'createPersonalAccessToken',
    status: 403,
    async call(ctx) {
      const session = await ctx.setup.session(users.mallory);
      await ctx.client().raw.POST('/profile/personal_access_tokens', { body: { _csrf: forged, name: 'contract' }, ...formOf(session) });
    },
    expect: htmlPage,
  },
  {
    name: 'revoking a personal access token redirects to the tokens page',
    operation: 'revokePersonalAccessToken',
    status: 302,
    async call(ctx) {
      const session = await ctx.setup.session(users.mallory);
      const id = await ctx.setup.newPersonalAccessToken(session);
      await ctx.client().raw.POST('/profile/personal_access_tokens/{token_id}/revoke', { params: { path: { token_id: id } }, body: { _csrf: session.csrf }, ...formOf(session) });
    },
    behaviour: redirectsTo('/profile/personal_access_tokens'),
  },
  {
    name: 'a token revoke form with a forged CSRF token is refused',
    operation: 'revokePersonalAccessToken',
    status: 403,
    async call(ctx) {
      const session = await ctx.setup.session(users.mallory);
      const id = await ctx.setup.newPersonalAccessToken(session);
      await ctx.client().raw.POST('/profile/personal_access_tokens/{token_id}/revoke', { params: { path: { token_id: id } }, body: { _csrf: forged }, ...formOf(session) });
    },
    expect: htmlPage,
  },
  {
    name: 'revoking another user\'s personal access token answers not found',
    operation: 'revokePersonalAccessToken',
    status: 404,
    async call(ctx) {
      // Token 1 is jsmith's seeded "laptop" token.
      const session = await ctx.setup.session(users.mallory);
      await ctx.client().raw.POST('/profile/personal_access_tokens/{token_id}/revoke', { params: { path: { token_id: 1 } }, body: { _csrf: session.csrf }, ...formOf(session) });
    },
    expect: htmlPage,
  },

  // --- API: current user ---------------------------------------------------------------------------------------
  {
    name: 'the current user with a personal access token',
    operation: 'getCurrentUser',
    status: 200,
    async call(ctx) {
      const me = await ctx.client({ privateToken: users.jsmith.pat }).user.current();
      expect(me.username).toBe('jsmith');
    },
  },
  {
    name: 'the current user with an OAuth token in the Authorization header',
    operation: 'getCurrentUser',
    status: 200,
    async call(ctx) {
      const tokens = await ctx.setup.token(users.jsmith, { scope: 'read_user' });
      await ctx.client({ accessToken: tokens.access_token, via: 'header' }).user.current();
    },
    expect: (x) => expect(x.json).not.toHaveProperty('password'),
  },
  {
    name: 'the current user with an OAuth token in the query string',
    operation: 'getCurrentUser',
    status: 200,
    async call(ctx) {
      const tokens = await ctx.setup.token(users.jsmith, { scope: 'read_user' });
      await ctx.client({ accessToken: tokens.access_token, via: 'query' }).user.current();
    },
  },
  {
    name: 'the current user without credentials',
    operation: 'getCurrentUser',
    status: 401,
    invalidRequest: 'no credentials at all: the operation requires one of its four security schemes',
    async call(ctx) {
      await rejectsWith(ctx.client(null).user.current(), TokenbellAuthenticationError, { status: 401 });
    },
    behaviour: (x) => expect(x.headers.get('www-authenticate')).toBe('Bearer realm="tokenbell"'),
  },

  // --- API: the instance, the token in hand, other users --------------------------------------------------------
  ...(['version', 'metadata'] as const).flatMap((call): ContractCase[] => {
    const operation = call === 'version' ? 'getVersion' : 'getMetadata';
    return [
      {
        name: `${call} answers any valid token, even one without an API scope`,
        operation,
        status: 200,
        async call(ctx) {
          const tokens = await ctx.setup.token(users.jsmith, { scope: 'openid', client: false });
          const answer = await ctx.client({ accessToken: tokens.access_token }).instance[call]();
          expect(answer.kas.enabled).toBe(false);
        },
        expect: (x) => expect(x.json).toMatchObject({ version: expect.stringMatching(/^\d+\.\d+\.\d+/), enterprise: false }),
        behaviour: (x) => expect(x.json).toMatchObject({ version: '17.11.0', revision: expect.stringMatching(/^tokenbell-/) }),
      },
      {
        name: `${call} with an unknown token`,
        operation,
        status: 401,
        async call(ctx) {
          await rejectsWith(ctx.client({ accessToken: unknownToken }).instance[call](), TokenbellAuthenticationError, { status: 401 });
        },
      },
    ];
  }),
  {
    name: 'the personal access token in hand',
    operation: 'getCurrentPersonalAccessToken',
    status: 200,
    async call(ctx) {
      const token = await ctx.client({ privateToken: users.awong.pat }).personalAccessTokens.self();
      expect(token.active).toBe(true);
    },
    behaviour: (x) => expect(x.json).toMatchObject({ name: 'ci', scopes: ['read_api'], revoked: false, expires_at: '2099-12-31' }),
  },
  {
    name: 'the personal access token in hand, asked with an OAuth token',
    operation: 'getCurrentPersonalAccessToken',
    status: 404,
    async call(ctx) {
      const tokens = await ctx.setup.token(users.jsmith, { scope: 'read_user' });
      await rejectsWith(ctx.client({ accessToken: tokens.access_token }).personalAccessTokens.self(), TokenbellNotFoundError, { status: 404 });
    },
  },
  {
    name: 'the personal access token in hand, with an unknown token',
    operation: 'getCurrentPersonalAccessToken',
    status: 401,
    async call(ctx) {
      await rejectsWith(ctx.client({ privateToken: 'tbpat-not-a-token-of-this-server-0000' }).personalAccessTokens.self(), TokenbellAuthenticationError, { status: 401 });
    },
  },
  {
    name: 'a personal access token revokes itself',
    operation: 'revokeCurrentPersonalAccessToken',
    status: 204,
    async call(ctx) {
      const pat = await ctx.setup.testHelpers().mintPersonalAccessToken({ username: 'mallory', name: unique('self-revoked'), scopes: ['read_repository'] });
      await ctx.client({ privateToken: pat.token }).personalAccessTokens.revokeSelf();
      return pat.token;
    },
    behaviour: async (_x, ctx, token) => {
      const after = await fetch(`${ctx.baseUrl}/api/v3/personal_access_tokens/self`, { headers: { 'PRIVATE-TOKEN': token as string } });
      expect(after.status).toBe(401);
    },
  },
  {
    name: 'an OAuth token cannot revoke itself as a personal access token',
    operation: 'revokeCurrentPersonalAccessToken',
    status: 404,
    async call(ctx) {
      const tokens = await ctx.setup.token(users.jsmith, { scope: 'read_user' });
      await rejectsWith(ctx.client({ accessToken: tokens.access_token }).personalAccessTokens.revokeSelf(), TokenbellNotFoundError, { status: 404 });
      return tokens.access_token;
    },
    behaviour: async (_x, ctx, token) => expect(await ctx.setup.tokenWorks(token as string)).toBe(true),
  },
  {
    name: 'revoking the personal access token in hand with an unknown token',
    operation: 'revokeCurrentPersonalAccessToken',
    status: 401,
    async call(ctx) {
      await rejectsWith(ctx.client({ privateToken: 'tbpat-not-a-token-of-this-server-0000' }).personalAccessTokens.revokeSelf(), TokenbellAuthenticationError, { status: 401 });
    },
  },
  {
    name: 'another user, as anyone sees them',
    operation: 'getUser',
    status: 200,
    async call(ctx) {
      const user = await ctx.client({ privateToken: users.jsmith.pat }).users.get(2);
      expect(user).not.toHaveProperty('email');
    },
    behaviour: (x) => expect(x.json).toMatchObject({ id: 2, username: 'awong' }),
  },
  {
    name: 'an unknown user',
    operation: 'getUser',
    status: 404,
    async call(ctx) {
      await rejectsWith(ctx.client({ privateToken: users.jsmith.pat }).users.get(999999), TokenbellNotFoundError, { status: 404 });
    },
    behaviour: (x) => expect(x.json).toEqual({ message: '404 User Not Found' }),
  },
  {
    name: 'a user id that is not a number',
    operation: 'getUser',
    status: 400,
    invalidRequest: 'the id is an integer',
    async call(ctx) {
      await rejectsWith(ctx.client({ privateToken: users.jsmith.pat }).users.get('jsmith' as never), TokenbellValidationError, { status: 400 });
    },
  },

  // --- API: notification settings, the rows each operation has ---------------------------------------------------
  ...apiOperations.map(
    ({ operation, call }): ContractCase => ({
      name: `${operation} with an unknown token`,
      operation,
      status: 401,
      async call(ctx) {
        const auth = { accessToken: unknownToken };
        await rejectsWith(call(ctx.client(auth), testHelpers(ctx, auth)), TokenbellAuthenticationError, { status: 401 });
      },
      behaviour: (x) => expect(x.headers.get('www-authenticate')).toContain('error="invalid_token"'),
    }),
  ),
  ...apiOperations
    .map(
      ({ operation, scope, as, call }): ContractCase => ({
        name: `${operation} with a ${tooLittle[scope]} token (needs ${scope})`,
        operation,
        status: 403,
        async call(ctx) {
          const tokens = await ctx.setup.token(users[as ?? 'jsmith'], { scope: tooLittle[scope], client: false });
          const auth = { accessToken: tokens.access_token };
          await rejectsWith(call(ctx.client(auth), testHelpers(ctx, auth)), TokenbellPermissionError, { status: 403 });
        },
        behaviour: (x) => expect(x.headers.get('www-authenticate')).toContain(`scope="${scope}"`),
      }),
    ),

  // --- API: global notification settings -----------------------------------------------------------------------
  {
    name: 'the global notification settings',
    operation: 'getGlobalNotificationSettings',
    status: 200,
    async call(ctx) {
      const settings = await ctx.client({ privateToken: users.awong.pat }).notificationSettings.global.get();
      expect(settings.notification_email).toContain('@');
    },
  },
  {
    name: 'changing the global level',
    operation: 'updateGlobalNotificationSettings',
    status: 200,
    async call(ctx) {
      const tokens = await ctx.setup.token(users.mallory);
      await ctx.client({ accessToken: tokens.access_token }).notificationSettings.global.update({ level: 'watch', notification_email: 'mallory@example.com' });
    },
    behaviour: (x) => expect(x.json).toEqual({ level: 'watch', notification_email: 'mallory@example.com' }),
  },
  {
    name: 'switching the global level to custom with events, in the query string',
    operation: 'updateGlobalNotificationSettings',
    status: 200,
    async call(ctx) {
      const tokens = await ctx.setup.token(users.mallory);
      await ctx.client({ accessToken: tokens.access_token }).raw.PUT('/api/v3/notification_settings', {
        params: { query: { level: 'custom', new_note: true, failed_pipeline: 'true' } },
      });
    },
    behaviour: (x) => expect(x.json).toMatchObject({ level: 'custom', events: { new_note: true, failed_pipeline: true, new_issue: false } }),
  },
  {
    name: 'the global level global is refused',
    operation: 'updateGlobalNotificationSettings',
    status: 400,
    invalidRequest: 'level global is outside GlobalNotificationLevel',
    async call(ctx) {
      const tokens = await ctx.setup.token(users.mallory);
      const update = { level: 'global' } as unknown as GlobalNotificationSettingsUpdate;
      await rejectsWith(ctx.client({ accessToken: tokens.access_token }).notificationSettings.global.update(update), TokenbellValidationError, { status: 400 });
    },
    behaviour: (x) => expect((x.json as { message: string }).message).toMatch(/^400 Bad request - level /),
  },

  // --- API: lists and membership look-ups -------------------------------------------------------------------------
  {
    name: "a user's groups, a page with the pagination headers",
    operation: 'listGroups',
    status: 200,
    async call(ctx) {
      const groups = await ctx.client({ privateToken: users.jsmith.pat }).groups.list({ per_page: 1, min_access_level: 50 });
      expect(groups).toHaveLength(1);
    },
    behaviour: (x) => {
      expect(x.json).toMatchObject([{ full_path: 'acme' }]);
      expect(x.headers.get('x-total')).toBe('2');
      expect(x.headers.get('x-next-page')).toBe('2');
      expect(x.headers.get('link')).toMatch(/[?&]page=2[^>]*>; rel="next"/);
    },
  },
  {
    name: 'groups with a min_access_level the service has not',
    operation: 'listGroups',
    status: 400,
    invalidRequest: 'min_access_level is one of the access levels',
    async call(ctx) {
      await rejectsWith(ctx.client({ privateToken: users.jsmith.pat }).groups.list({ min_access_level: 7 as never }), TokenbellValidationError, { status: 400 });
    },
  },
  {
    name: "the projects a user is a member of, in the simple view",
    operation: 'listProjects',
    status: 200,
    async call(ctx) {
      await ctx.client({ privateToken: users.awong.pat }).projects.list({ membership: true, simple: true, search: 'widgets' });
    },
    behaviour: (x) => {
      expect(x.json).toEqual([expect.objectContaining({ path_with_namespace: 'acme/widgets' })]);
      expect(x.json).toEqual([expect.not.objectContaining({ visibility: expect.anything() })]);
      expect(x.headers.get('x-total')).toBe('1');
    },
  },
  {
    name: 'projects with a visibility the service has not',
    operation: 'listProjects',
    status: 400,
    invalidRequest: 'visibility is private, internal or public',
    async call(ctx) {
      await rejectsWith(ctx.client({ privateToken: users.jsmith.pat }).projects.list({ visibility: 'secret' as never }), TokenbellValidationError, { status: 400 });
    },
  },
  ...(['group', 'project'] as const).flatMap((kind): ContractCase[] => {
    const operation = kind === 'group' ? 'getGroupMember' : 'getProjectMember';
    const member = (ctx: CaseContext, id: string, userId: number, auth: TokenbellAuth = { privateToken: users.jsmith.pat }) =>
      kind === 'group' ? ctx.client(auth).groups.member(id, userId) : ctx.client(auth).projects.member(id, userId);
    const own = kind === 'group' ? 'acme' : 'acme/widgets';
    return [
      {
        name: `a ${kind} member, inherited ones included`,
        operation,
        status: 200,
        async call(ctx) {
          const found = await member(ctx, own, 2);
          expect(found.membership_state).toBe('active');
        },
        behaviour: (x) => expect(x.json).toMatchObject({ id: 2, username: 'awong', access_level: 30 }),
      },
      {
        name: `a user who is no member of the ${kind}`,
        operation,
        status: 404,
        mockExample: 'member',
        async call(ctx) {
          await rejectsWith(member(ctx, own, 3), TokenbellNotFoundError, { status: 404 });
        },
        behaviour: (x) => expect(x.json).toEqual({ message: '404 Member Not Found' }),
      },
      {
        name: `a ${kind} the caller may not see, asked for a member`,
        operation,
        status: 404,
        mockExample: kind,
        async call(ctx) {
          const tokens = await ctx.setup.token(users.mallory, { scope: 'read_api' });
          await rejectsWith(member(ctx, own, 1, { accessToken: tokens.access_token }), TokenbellNotFoundError, { status: 404 });
        },
        behaviour: (x) => expect(x.json).toEqual({ message: `404 ${kind === 'group' ? 'Group' : 'Project'} Not Found` }),
      },
      {
        name: `a ${kind} member asked by a user id that is not a number`,
        operation,
        status: 400,
        invalidRequest: 'user_id is an integer',
        async call(ctx) {
          await rejectsWith(member(ctx, own, 'awong' as never), TokenbellValidationError, { status: 400 });
        },
      },
    ];
  }),

  // --- API: groups and projects ---------------------------------------------------------------------------------
  {
    name: 'a group by path',
    operation: 'getGroup',
    status: 200,
    async call(ctx) {
      const group = await ctx.client({ privateToken: users.awong.pat }).groups.get('acme');
      expect(group.full_path).toBe('acme');
    },
    behaviour: (x) => expect(x.json).toMatchObject({ path: 'acme', parent_id: null, web_url: expect.stringMatching(/\/groups\/acme$/) }),
  },
  {
    name: 'a group id longer than the document allows, fetching the group',
    operation: 'getGroup',
    status: 400,
    invalidRequest: 'a 256-character id is longer than GroupOrProjectId allows',
    async call(ctx) {
      await rejectsWith(ctx.client({ privateToken: users.jsmith.pat }).groups.get('g'.repeat(256)), TokenbellValidationError, { status: 400 });
    },
  },
  {
    name: 'a private group the user is not a member of is not found, fetching the group',
    operation: 'getGroup',
    status: 404,
    async call(ctx) {
      const tokens = await ctx.setup.token(users.mallory, { scope: 'read_api' });
      await rejectsWith(ctx.client({ accessToken: tokens.access_token }).groups.get('acme'), TokenbellNotFoundError, { status: 404 });
    },
    expect: (x) => expect(x.json).toEqual({ message: '404 Group Not Found' }),
  },
  {
    name: 'a project by full path, with its namespace',
    operation: 'getProject',
    status: 200,
    async call(ctx) {
      const project = await ctx.client({ privateToken: users.awong.pat }).projects.get('acme/widgets');
      expect(project.path_with_namespace).toBe('acme/widgets');
    },
    behaviour: (x) => expect(x.json).toMatchObject({ path_with_namespace: 'acme/widgets', namespace: { kind: 'group', full_path: 'acme' } }),
  },
  {
    name: 'a project path longer than the document allows, fetching the project',
    operation: 'getProject',
    status: 400,
    invalidRequest: 'a 256-character path is longer than GroupOrProjectId allows',
    async call(ctx) {
      await rejectsWith(ctx.client({ privateToken: users.jsmith.pat }).projects.get(`acme/${'p'.repeat(251)}`), TokenbellValidationError);
    },
  },
  {
    name: 'a private project the user may not see is not found, fetching the project',
    operation: 'getProject',
    status: 404,
    async call(ctx) {
      const tokens = await ctx.setup.token(users.mallory, { scope: 'read_api' });
      await rejectsWith(ctx.client({ accessToken: tokens.access_token }).projects.get('jsmith/dotfiles'), TokenbellNotFoundError);
    },
    expect: (x) => expect(x.json).toEqual({ message: '404 Project Not Found' }),
  },

  // --- API: group notification settings ------------------------------------------------------------------------
  {
    name: 'a group\'s notification settings by path',
    operation: 'getGroupNotificationSettings',
    status: 200,
    mockExample: 'global',
    async call(ctx) {
      const settings = await ctx.client({ privateToken: users.awong.pat }).notificationSettings.group('acme').get();
      expect(settings).toEqual({ level: 'global' });
    },
  },
  {
    name: 'a group id longer than the document allows',
    operation: 'getGroupNotificationSettings',
    status: 400,
    invalidRequest: 'a 256-character id is longer than GroupOrProjectId allows',
    async call(ctx) {
      await rejectsWith(ctx.client({ privateToken: users.jsmith.pat }).notificationSettings.group('g'.repeat(256)).get(), TokenbellValidationError, { status: 400 });
    },
  },
  {
    name: 'a private group the user is not a member of is not found',
    operation: 'getGroupNotificationSettings',
    status: 404,
    async call(ctx) {
      const tokens = await ctx.setup.token(users.mallory, { scope: 'read_api' });
      await rejectsWith(ctx.client({ accessToken: tokens.access_token }).notificationSettings.group('acme').get(), TokenbellNotFoundError, { status: 404 });
    },
    expect: (x) => expect(x.json).toEqual({ message: '404 Group Not Found' }),
  },
  {
    name: 'setting a custom level on a group answers every event',
    operation: 'updateGroupNotificationSettings',
    status: 200,
    mockExample: 'custom',
    async call(ctx) {
      const settings = await ctx.client({ privateToken: users.jsmith.pat }).notificationSettings.group('opensource').update({ level: 'custom', ...events });
      expect(settings.level).toBe('custom');
    },
    behaviour: (x) => expect(x.json).toEqual({ level: 'custom', events }),
  },
  {
    name: 'a group level outside the document is refused',
    operation: 'updateGroupNotificationSettings',
    status: 400,
    invalidRequest: 'level loud is outside NotificationLevel',
    async call(ctx) {
      const update = { level: 'loud' } as unknown as NotificationSettingsUpdate;
      await rejectsWith(ctx.client({ privateToken: users.jsmith.pat }).notificationSettings.group('acme').update(update), TokenbellValidationError, { status: 400 });
    },
  },
  {
    name: 'changing a group that does not exist is not found',
    operation: 'updateGroupNotificationSettings',
    status: 404,
    async call(ctx) {
      await rejectsWith(ctx.client({ privateToken: users.jsmith.pat }).notificationSettings.group('no-such-group').update({ level: 'watch' }), TokenbellNotFoundError);
    },
  },

  // --- API: project notification settings ----------------------------------------------------------------------
  {
    name: 'a project\'s notification settings by full path',
    operation: 'getProjectNotificationSettings',
    status: 200,
    mockExample: 'global',
    async call(ctx) {
      await ctx.client({ privateToken: users.awong.pat }).notificationSettings.project('acme/widgets').get();
    },
    expect: (x) => {
      expect(x.url.pathname).toBe('/api/v3/projects/acme%2Fwidgets/notification_settings');
      expect(x.json).toEqual({ level: 'global' });
    },
  },
  {
    name: 'a project path longer than the document allows',
    operation: 'getProjectNotificationSettings',
    status: 400,
    invalidRequest: 'a 256-character path is longer than GroupOrProjectId allows',
    async call(ctx) {
      await rejectsWith(ctx.client({ privateToken: users.jsmith.pat }).notificationSettings.project(`acme/${'p'.repeat(251)}`).get(), TokenbellValidationError);
    },
  },
  {
    name: 'a private project the user may not see is not found',
    operation: 'getProjectNotificationSettings',
    status: 404,
    async call(ctx) {
      const tokens = await ctx.setup.token(users.mallory, { scope: 'read_api' });
      await rejectsWith(ctx.client({ accessToken: tokens.access_token }).notificationSettings.project('jsmith/dotfiles').get(), TokenbellNotFoundError);
    },
    expect: (x) => expect(x.json).toEqual({ message: '404 Project Not Found' }),
  },
  {
    name: 'setting a non-custom level on a project answers the level only',
    operation: 'updateProjectNotificationSettings',
    status: 200,
    mockExample: 'global',
    async call(ctx) {
      await ctx.client({ privateToken: users.jsmith.pat }).notificationSettings.project('acme/website').update({ level: 'global', new_issue: true });
    },
    expect: (x) => expect(Object.keys(x.json as object)).toEqual(['level']),
  },
  {
    name: 'a project event flag that is not a boolean is refused',
    operation: 'updateProjectNotificationSettings',
    status: 400,
    invalidRequest: 'failed_pipeline "maybe" is not an EventFlag',
    async call(ctx) {
      const update = { level: 'custom', failed_pipeline: 'maybe' } as unknown as NotificationSettingsUpdate;
      await rejectsWith(ctx.client({ privateToken: users.jsmith.pat }).notificationSettings.project('acme/widgets').update(update), TokenbellValidationError);
    },
  },
  {
    name: 'changing a project the user may not see is not found',
    operation: 'updateProjectNotificationSettings',
    status: 404,
    async call(ctx) {
      const tokens = await ctx.setup.token(users.mallory);
      await rejectsWith(ctx.client({ accessToken: tokens.access_token }).notificationSettings.project('acme/widgets').update({ level: 'watch' }), TokenbellNotFoundError);
    },
  },

  // --- Test helpers: notification events in, the mail they queued listed back ------------------------------------
  {
    name: 'recording a failed pipeline answers its one recipient, the pipeline\'s user, whose mail is then listed',
    operation: 'emitNotificationEvent',
    status: 201,
    async call(ctx) {
      return testHelpers(ctx, { privateToken: users.root.pat }).emitNotificationEvent('acme/widgets', {
        kind: 'failed_pipeline',
        title: 'Pipeline #42 failed on main',
        author: 'jsmith',
      });
    },
    expect: (x) =>
      expect(x.json).toMatchObject({
        kind: 'failed_pipeline',
        title: 'Pipeline #42 failed on main',
        author: 'jsmith',
        recipients: [{ username: 'jsmith', email: 'jsmith@example.com', reason: 'participating' }],
      }),
    async behaviour(_x, ctx, result) {
      const event = result as NotificationEventResult;
      const messages = await ctx.setup.notificationMessages({ event_id: event.id });
      expect(messages).toEqual([
        expect.objectContaining({ event_id: event.id, username: 'jsmith', to: 'jsmith@example.com', reason: 'participating', status: expect.stringMatching(/^(queued|sent)$/) }),
      ]);
      expect(messages[0]!.subject).toContain('acme/widgets');
    },
  },
  {
    name: 'recording an issue leaves out its author and a mentioned user who may not see the project',
    operation: 'emitNotificationEvent',
    status: 201,
    async call(ctx) {
      // acme/widgets is private to acme's members, jsmith and awong; mallory is a member of nothing.
      return testHelpers(ctx, { privateToken: users.root.pat }).emitNotificationEvent('acme/widgets', {
        kind: 'new_issue',
        title: 'The bell does not ring',
        author: 'jsmith',
        participants: ['jsmith', 'awong'],
        mentioned: ['mallory'],
      });
    },
    async behaviour(x, ctx) {
      const event = x.json as NotificationEventResult;
      expect(event.recipients).toEqual([{ user_id: expect.any(Number), username: 'awong', email: 'awong@example.com', reason: 'participating' }]);
      const messages = await ctx.setup.notificationMessages({ event_id: event.id });
      expect(messages.map((m) => [m.username, m.reason])).toEqual([['awong', 'participating']]);
    },
  },
  {
    name: 'recording an event that names an unknown user is refused, and queues no mail',
    operation: 'emitNotificationEvent',
    status: 400,
    async call(ctx) {
      // Recorded, it would have mailed awong, a participant.
      const before = idsOf(await ctx.setup.notificationMessages({ username: 'awong', per_page: 100 }));
      await rejectsWith(
        testHelpers(ctx, { privateToken: users.root.pat }).emitNotificationEvent('acme/widgets', {
          kind: 'new_issue',
          title: 'Refused',
          author: 'jsmith',
          participants: ['awong', 'contract-suite-no-such-user'],
        }),
        TokenbellValidationError,
        { status: 400 },
      );
      return before;
    },
    async behaviour(x, ctx, before) {
      expect(x.json).toEqual({ message: '400 Bad request - participants must name existing users: there is no user "contract-suite-no-such-user"' });
      expect(idsOf(await ctx.setup.notificationMessages({ username: 'awong', per_page: 100 }))).toEqual(before);
    },
  },
  {
    name: 'an event kind outside the document is refused',
    operation: 'emitNotificationEvent',
    status: 400,
    invalidRequest: 'kind no_such_event is outside NotificationEvent',
    async call(ctx) {
      const event = { kind: 'no_such_event', title: 'Refused', author: 'jsmith' } as unknown as NotificationEventRequest;
      await rejectsWith(testHelpers(ctx, { privateToken: users.root.pat }).emitNotificationEvent('acme/widgets', event), TokenbellValidationError, { status: 400 });
    },
    behaviour: (x) => expect((x.json as { message: string }).message).toMatch(/^400 Bad request - kind /),
  },
  {
    name: 'recording an event by a user who is not an administrator is refused',
    operation: 'emitNotificationEvent',
    status: 403,
    async call(ctx) {
      await rejectsWith(
        testHelpers(ctx, { privateToken: users.jsmith.pat }).emitNotificationEvent('acme/widgets', { kind: 'failed_pipeline', title: 'Refused', author: 'jsmith' }),
        TokenbellPermissionError,
        { status: 403 },
      );
    },
    expect: (x) => expect(x.json).toEqual({ message: '403 Forbidden - test helpers are for administrators' }),
  },
  {
    name: 'recording an event on a project that does not exist is not found',
    operation: 'emitNotificationEvent',
    status: 404,
    async call(ctx) {
      await rejectsWith(
        testHelpers(ctx, { privateToken: users.root.pat }).emitNotificationEvent('acme/no-such-project', { kind: 'failed_pipeline', title: 'Refused', author: 'jsmith' }),
        TokenbellNotFoundError,
      );
    },
    expect: (x) => expect(x.json).toEqual({ message: '404 Project Not Found' }),
  },
  {
    name: 'recording an event on an instance without test helpers is not found',
    operation: 'emitNotificationEvent',
    status: 404,
    instance: 'restricted',
    async call(ctx) {
      await rejectsWith(
        testHelpers(ctx, { privateToken: users.root.pat }).emitNotificationEvent('acme/widgets', { kind: 'failed_pipeline', title: 'Refused', author: 'jsmith' }),
        TokenbellNotFoundError,
      );
    },
    // The area's plain 404, not the project's: nothing tells that the area exists.
    behaviour: (x) => expect(x.json).toEqual({ message: '404 Not Found' }),
  },
  {
    name: 'the mail of an event, with a read_api token',
    operation: 'listNotificationMessages',
    status: 200,
    async call(ctx) {
      const event = await ctx.setup.notificationEvent('acme/widgets', { kind: 'failed_pipeline', title: 'Pipeline #42 failed on main', author: 'jsmith' });
      const tokens = await ctx.setup.token(users.root, { scope: 'read_api' });
      await testHelpers(ctx, { accessToken: tokens.access_token }).notificationMessages({ event_id: event.id });
      return event;
    },
    expect: (x) =>
      expect(x.json).toEqual([
        expect.objectContaining({ username: 'jsmith', to: 'jsmith@example.com', reason: 'participating', headers: expect.objectContaining({ 'X-GitLab-Project': 'acme/widgets' }) }),
      ]),
    behaviour(x, _ctx, event) {
      const [message] = x.json as NotificationMessage[];
      expect(message).toMatchObject({ event_id: (event as NotificationEventResult).id, headers: { 'X-GitLab-NotificationReason': 'participating' } });
      // Queued, or already handed to the log (no --smtp-url) by the delivery worker.
      if (message!.status === 'queued') expect(message).toMatchObject({ attempts: 0, sent_at: null });
      else expect(message).toMatchObject({ status: 'sent', last_error: null, sent_at: expect.any(String) });
    },
  },
  {
    name: 'the mail of a user who does not exist is refused',
    operation: 'listNotificationMessages',
    status: 400,
    async call(ctx) {
      await rejectsWith(
        testHelpers(ctx, { privateToken: users.root.pat }).notificationMessages({ username: 'contract-suite-no-such-user' }),
        TokenbellValidationError,
        { status: 400 },
      );
    },
    behaviour: (x) => expect((x.json as { message: string }).message).toMatch(/^400 Bad request - username/),
  },
  {
    name: 'more mail per page than the document allows is refused',
    operation: 'listNotificationMessages',
    status: 400,
    invalidRequest: 'per_page 101 is over its maximum of 100',
    async call(ctx) {
      await rejectsWith(testHelpers(ctx, { privateToken: users.root.pat }).notificationMessages({ per_page: 101 }), TokenbellValidationError, { status: 400 });
    },
    behaviour: (x) => expect((x.json as { message: string }).message).toMatch(/^400 Bad request - per_page /),
  },
  {
    name: 'the mail listing for a user who is not an administrator is refused',
    operation: 'listNotificationMessages',
    status: 403,
    async call(ctx) {
      await rejectsWith(testHelpers(ctx, { privateToken: users.jsmith.pat }).notificationMessages(), TokenbellPermissionError, { status: 403 });
    },
    expect: (x) => expect(x.json).toEqual({ message: '403 Forbidden - test helpers are for administrators' }),
  },
  {
    name: 'the mail listing on an instance without test helpers is not found',
    operation: 'listNotificationMessages',
    status: 404,
    instance: 'restricted',
    async call(ctx) {
      await rejectsWith(testHelpers(ctx, { privateToken: users.root.pat }).notificationMessages(), TokenbellNotFoundError, { status: 404 });
    },
    expect: (x) => expect(x.json).toEqual({ message: '404 Not Found' }),
  },

  // --- Test helpers: shaping state --------------------------------------------------------------------------------
  {
    name: 'adding a user answers it as the API shows it, without the password, and the user can then use the API',
    operation: 'createTestUser',
    status: 201,
    async call(ctx) {
      const username = unique('contract-user');
      await testHelpers(ctx, asRoot).createUser({ username, email: `${username}@example.com`, name: 'Contract User', password: 'contract-suite-password', bio: 'Added by the contract suite.' });
      return username;
    },
    expect: (x) => expect(x.text).not.toContain('contract-suite-password'),
    async behaviour(x, ctx, username) {
      expect(x.json).toMatchObject({ username, email: `${username}@example.com`, name: 'Contract User', bio: 'Added by the contract suite.', state: 'active', is_admin: false });
      const pat = await ctx.setup.testHelpers().mintPersonalAccessToken({ username: username as string, name: 'check', scopes: ['read_user'] });
      expect(await ctx.setup.client({ privateToken: pat.token }).user.current()).toMatchObject({ username });
    },
  },
  {
    name: 'adding a user whose username is taken, whatever the case, is refused',
    operation: 'createTestUser',
    status: 400,
    async call(ctx) {
      const username = unique('contract-twin');
      await rejectsWith(
        testHelpers(ctx, asRoot).createUser({ username: 'JSMITH', email: `${username}@example.com`, name: 'Twin', password: 'contract-suite-password' }),
        TokenbellValidationError,
        { status: 400 },
      );
    },
    behaviour: (x) => expect((x.json as { message: string }).message).toMatch(/^400 Bad request - username .*taken/),
  },
  {
    name: 'adding a private group with a member answers it, and the member sees it',
    operation: 'createTestGroup',
    status: 201,
    async call(ctx) {
      const path = unique('contract-group');
      await testHelpers(ctx, asRoot).createGroup({ path, name: 'Contract Group', members: [{ username: 'mallory', access_level: 30 }] });
      return path;
    },
    async behaviour(x, ctx, path) {
      expect(x.json).toMatchObject({ path, full_path: path, name: 'Contract Group', visibility: 'private' });
      const tokens = await ctx.setup.token(users.mallory, { scope: 'read_api' });
      expect(await ctx.setup.client({ accessToken: tokens.access_token }).groups.get(path as string)).toMatchObject({ path });
    },
  },
  {
    name: 'adding a group with a member who does not exist is refused',
    operation: 'createTestGroup',
    status: 400,
    async call(ctx) {
      await rejectsWith(
        testHelpers(ctx, asRoot).createGroup({ path: unique('contract-group'), name: 'Refused', members: [{ username: 'contract-suite-no-such-user', access_level: 30 }] }),
        TokenbellValidationError,
        { status: 400 },
      );
    },
    behaviour: (x) => expect((x.json as { message: string }).message).toMatch(/^400 Bad request - .*contract-suite-no-such-user/),
  },
  {
    name: 'adding a private project with a member answers it with its namespace, and the member sees it',
    operation: 'createTestProject',
    status: 201,
    async call(ctx) {
      const path = unique('contract-project');
      await testHelpers(ctx, asRoot).createProject({ namespace: 'acme', path, name: 'Contract Project', members: [{ username: 'mallory', access_level: 20 }] });
      return path;
    },
    async behaviour(x, ctx, path) {
      expect(x.json).toMatchObject({ path, path_with_namespace: `acme/${path}`, visibility: 'private', namespace: { path: 'acme', kind: 'group' } });
      const tokens = await ctx.setup.token(users.mallory, { scope: 'read_api' });
      expect(await ctx.setup.client({ accessToken: tokens.access_token }).projects.get(`acme/${path}`)).toMatchObject({ path_with_namespace: `acme/${path}` });
    },
  },
  {
    name: 'adding a project in a namespace that does not exist is refused',
    operation: 'createTestProject',
    status: 400,
    async call(ctx) {
      await rejectsWith(
        testHelpers(ctx, asRoot).createProject({ namespace: 'contract-suite-no-such-namespace', path: 'widgets', name: 'Refused' }),
        TokenbellValidationError,
        { status: 400 },
      );
    },
    behaviour: (x) => expect((x.json as { message: string }).message).toMatch(/^400 Bad request - .*contract-suite-no-such-namespace/),
  },
  {
    name: 'making a user a member of a private project answers the membership, and the project is then theirs to see',
    operation: 'setTestMembership',
    status: 200,
    async call(ctx) {
      // A project of its own, so that mallory stays a member of nothing the other cases use.
      const path = unique('contract-membership');
      await ctx.setup.testHelpers().createProject({ namespace: 'opensource', path, name: 'Contract Membership' });
      const tokens = await ctx.setup.token(users.mallory, { scope: 'read_api' });
      const seen = () => ctx.setup.client({ accessToken: tokens.access_token }).projects.get(`opensource/${path}`).then(() => true, () => false);
      const seenBefore = await seen();
      await testHelpers(ctx, asRoot).setMembership({ username: 'mallory', project: `opensource/${path}`, access_level: 20 });
      return { path, seenBefore, seenAfter: await seen() };
    },
    behaviour(x, _ctx, result) {
      const { path, seenBefore, seenAfter } = result as { path: string; seenBefore: boolean; seenAfter: boolean };
      expect(x.json).toEqual({ username: 'mallory', project: `opensource/${path}`, access_level: 20 });
      expect([seenBefore, seenAfter]).toEqual([false, true]);
    },
  },
  {
    name: 'a membership of a project that does not exist is refused',
    operation: 'setTestMembership',
    status: 400,
    async call(ctx) {
      await rejectsWith(
        testHelpers(ctx, asRoot).setMembership({ username: 'mallory', project: 'contract-suite/no-such-project', access_level: 10 }),
        TokenbellValidationError,
        { status: 400 },
      );
    },
    behaviour: (x) => expect(x.json).toEqual({ message: '400 Bad request - project must name an existing project: there is no project "contract-suite/no-such-project"' }),
  },
  {
    name: 'registering an application answers its App Secret once, and the application gets tokens with it',
    operation: 'createTestApplication',
    status: 201,
    async call(ctx) {
      await testHelpers(ctx, asRoot).createApplication({ name: unique('Contract App'), owner: 'jsmith', redirect_uris: ['https://app.example.com/contract/callback'], scopes: ['read_user'] });
    },
    async behaviour(x, ctx) {
      const app = x.json as { client_id: string; client_secret: string };
      expect(x.json).toMatchObject({ owner: 'jsmith', confidential: true, client_secret: expect.any(String), redirect_uris: ['https://app.example.com/contract/callback'], scopes: ['read_user'] });
      const redirectUri = 'https://app.example.com/contract/callback';
      const { code } = await ctx.setup.testHelpers().authorize({ username: 'jsmith', client_id: app.client_id, redirect_uri: redirectUri });
      const tokens = await ctx.setup.exchange(code!, undefined, { clientId: app.client_id, clientSecret: app.client_secret, redirectUri });
      expect(tokens.scope).toBe('read_user');
      expect(await ctx.setup.tokenWorks(tokens.access_token)).toBe(true);
    },
  },
  {
    name: 'registering a public application with an App Secret is refused',
    operation: 'createTestApplication',
    status: 400,
    async call(ctx) {
      await rejectsWith(
        testHelpers(ctx, asRoot).createApplication({ name: 'Refused', owner: 'jsmith', redirect_uris: ['https://app.example.com/callback'], confidential: false, client_secret: 'not-for-a-public-client' }),
        TokenbellValidationError,
        { status: 400 },
      );
    },
    behaviour: (x) => expect((x.json as { message: string }).message).toMatch(/^400 Bad request - client_secret must not be given for a public client/),
  },

  // --- Test helpers: tokens without the browser, the authorization step ------------------------------------------
  {
    name: 'minting a token pair for a user and an application answers what the code grant issues, and the token works',
    operation: 'mintAccessToken',
    status: 201,
    async call(ctx) {
      await testHelpers(ctx, asRoot).mintAccessToken({ username: 'jsmith', client_id: exampleApp.clientId, scopes: ['read_user'] });
    },
    expect: (x) => expect(x.json).toMatchObject({ token_type: 'bearer', access_token: expect.any(String) }),
    async behaviour(x, ctx) {
      const tokens = x.json as TokenResponse;
      expect(tokens).toMatchObject({ scope: 'read_user', expires_in: 7200, refresh_token: expect.any(String) });
      expect(await ctx.setup.client({ accessToken: tokens.access_token }).user.current()).toMatchObject({ username: 'jsmith' });
    },
  },
  {
    name: 'minting a token for a user who does not exist is refused',
    operation: 'mintAccessToken',
    status: 400,
    async call(ctx) {
      await rejectsWith(testHelpers(ctx, asRoot).mintAccessToken({ username: 'contract-suite-no-such-user', client_id: exampleApp.clientId }), TokenbellValidationError, { status: 400 });
    },
    behaviour: (x) => expect(x.json).toEqual({ message: '400 Bad request - username must name an existing user: there is no user "contract-suite-no-such-user"' }),
  },
  {
    name: 'minting a personal access token answers its value once, and the API takes it',
    operation: 'mintPersonalAccessToken',
    status: 201,
    async call(ctx) {
      await testHelpers(ctx, asRoot).mintPersonalAccessToken({ username: 'mallory', name: 'contract minted', scopes: ['read_user'], expires_at: '2099-12-31' });
    },
    async behaviour(x, ctx) {
      const pat = x.json as { token: string };
      expect(x.json).toMatchObject({ name: 'contract minted', scopes: ['read_user'], expires_at: '2099-12-31', token: expect.any(String) });
      expect(await ctx.setup.client({ privateToken: pat.token }).user.current()).toMatchObject({ username: 'mallory' });
    },
  },
  {
    name: 'minting a personal access token for a user who does not exist is refused',
    operation: 'mintPersonalAccessToken',
    status: 400,
    async call(ctx) {
      await rejectsWith(testHelpers(ctx, asRoot).mintPersonalAccessToken({ username: 'contract-suite-no-such-user', name: 'refused' }), TokenbellValidationError, { status: 400 });
    },
    behaviour: (x) => expect((x.json as { message: string }).message).toMatch(/^400 Bad request - username must name an existing user/),
  },
  {
    name: 'the authorization step run headless answers the redirect with a code and the state, which redeems with the PKCE verifier',
    operation: 'authorizeHeadlessly',
    status: 201,
    async call(ctx) {
      const codeVerifier = 'contract-suite-headless-verifier-0123456789abcdefghijklmno';
      const challenge = Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(codeVerifier))).toString('base64url');
      await testHelpers(ctx, asRoot).authorize({
        username: 'jsmith',
        client_id: exampleApp.clientId,
        redirect_uri: exampleApp.redirectUri,
        scope: 'read_user',
        state: 'contract-headless',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      return codeVerifier;
    },
    async behaviour(x, ctx, codeVerifier) {
      const { code, redirect_to } = x.json as { code: string; redirect_to: string };
      expect(x.json).toMatchObject({ state: 'contract-headless', error: null, code: expect.any(String) });
      expect(redirect_to).toBe(`${exampleApp.redirectUri}?code=${code}&state=contract-headless`);
      const tokens = await ctx.setup.exchange(code, codeVerifier as string);
      expect(tokens.scope).toBe('read_user');
      expect(await ctx.setup.tokenWorks(tokens.access_token)).toBe(true);
    },
  },
  {
    name: 'the authorization step run headless with a scope the application lacks answers the error redirect',
    operation: 'authorizeHeadlessly',
    status: 201,
    async call(ctx) {
      await testHelpers(ctx, asRoot).authorize({ username: 'jsmith', client_id: exampleApp.clientId, redirect_uri: exampleApp.redirectUri, scope: 'sudo', state: 'contract-refused' });
    },
    behaviour: (x) => expect(x.json).toMatchObject({ code: null, error: 'invalid_scope', state: 'contract-refused' }),
  },
  {
    name: 'the authorization step run headless with a redirect URI the application did not register is refused',
    operation: 'authorizeHeadlessly',
    status: 400,
    async call(ctx) {
      await rejectsWith(
        testHelpers(ctx, asRoot).authorize({ username: 'jsmith', client_id: exampleApp.clientId, redirect_uri: 'https://evil.example/callback' }),
        TokenbellValidationError,
        { status: 400 },
      );
    },
    behaviour: (x) => expect((x.json as { message: string }).message).toMatch(/^400 Bad request - redirect_uri /),
  },
  {
    name: 'a device authorization answered headless as a named user lets the device\'s poll get tokens',
    operation: 'decideDeviceAuthorizationHeadlessly',
    status: 201,
    async call(ctx) {
      const { device_code, user_code } = await ctx.setup.deviceAuthorization();
      await testHelpers(ctx, asRoot).decideDeviceAuthorization({ user_code: `${user_code.slice(0, 4)}-${user_code.slice(4).toLowerCase()}`, username: 'jsmith', decision: 'approve' });
      return device_code;
    },
    async behaviour(x, ctx, deviceCode) {
      expect(x.json).toEqual({ client_id: publicApp.clientId, scope: 'api read_api read_user', username: 'jsmith', decision: 'approve' });
      expect((await ctx.setup.pollDevice(deviceCode as string)).status).toBe(200);
    },
  },
  {
    name: 'a device authorization answered headless with a code no device shows is refused',
    operation: 'decideDeviceAuthorizationHeadlessly',
    status: 400,
    async call(ctx) {
      await rejectsWith(testHelpers(ctx, asRoot).decideDeviceAuthorization({ user_code: 'ZZZZ-ZZZ4', username: 'jsmith', decision: 'approve' }), TokenbellValidationError, { status: 400 });
    },
    behaviour: (x) => expect((x.json as { message: string }).message).toMatch(/^400 Bad request - user_code must be the code of a device authorization/),
  },
  {
    name: 'the automatic approval names the user it approves as',
    operation: 'getAutoApproval',
    status: 200,
    async call(ctx) {
      await ctx.setup.testHelpers().setAutoApproval('awong');
      try {
        await testHelpers(ctx, asRoot).autoApproval();
      } finally {
        await ctx.setup.testHelpers().setAutoApproval(null);
      }
    },
    behaviour: (x) => expect(x.json).toEqual({ username: 'awong' }),
  },
  {
    name: 'with automatic approval the authorization endpoint redirects with a code at once, and null stops it',
    operation: 'setAutoApproval',
    status: 200,
    async call(ctx) {
      await testHelpers(ctx, asRoot).setAutoApproval('jsmith');
      try {
        // A browser with no session, sent to the real endpoint.
        const { response } = await ctx.setup.client(null).raw.GET('/oauth/authorize', {
          params: { query: { client_id: exampleApp.clientId, redirect_uri: exampleApp.redirectUri, response_type: 'code', state: 'contract-auto' } },
          parseAs: 'text',
        });
        return { status: response.status, location: response.headers.get('location') };
      } finally {
        await ctx.setup.testHelpers().setAutoApproval(null);
      }
    },
    expect: (x) => expect(x.json).toEqual({ username: expect.any(String) }),
    async behaviour(x, ctx, result) {
      const { status, location } = result as { status: number; location: string };
      expect(x.json).toEqual({ username: 'jsmith' });
      expect(status).toBe(302);
      const redirect = new URL(location);
      expect(redirect.origin + redirect.pathname).toBe(exampleApp.redirectUri);
      expect(redirect.searchParams.get('state')).toBe('contract-auto');
      const tokens = await ctx.setup.exchange(redirect.searchParams.get('code')!);
      expect(await ctx.setup.client({ accessToken: tokens.access_token }).user.current()).toMatchObject({ username: 'jsmith' });
      expect(await ctx.setup.testHelpers().autoApproval()).toEqual({ username: null });
    },
  },
  {
    name: 'automatic approval as a user who does not exist is refused, and leaves the setting as it was',
    operation: 'setAutoApproval',
    status: 400,
    async call(ctx) {
      const before = await ctx.setup.testHelpers().autoApproval();
      await rejectsWith(testHelpers(ctx, asRoot).setAutoApproval('contract-suite-no-such-user'), TokenbellValidationError, { status: 400 });
      return before;
    },
    async behaviour(x, ctx, before) {
      expect((x.json as { message: string }).message).toMatch(/^400 Bad request - username must name an existing user/);
      expect(await ctx.setup.testHelpers().autoApproval()).toEqual(before);
    },
  },

  // --- Test helpers: the clock and reset, on an instance of their own ---------------------------------------------
  {
    name: "the clock answers the instance's time and how far it is ahead of real time",
    operation: 'getTestClock',
    status: 200,
    async call(ctx) {
      await testHelpers(ctx, asRoot).clock();
    },
    behaviour(x) {
      const { now, offset_seconds } = x.json as TestClock;
      expect(Math.abs(Date.parse(now) - offset_seconds * 1000 - Date.now())).toBeLessThan(5000);
    },
  },
  {
    // The disposable instance: moved on the suite's server, the clock would expire the tokens of every later case.
    name: 'moving the clock past an access token lifetime answers the clock moved, and the token no longer works',
    operation: 'advanceTestClock',
    status: 200,
    instance: 'disposable',
    async call(ctx) {
      const before = await onInstance(ctx).clock();
      const minted = await onInstance(ctx).mintAccessToken({ username: 'jsmith', client_id: exampleApp.clientId, scopes: ['read_user'] });
      await testHelpers(ctx, asRoot).advanceClock(7201);
      return { before, minted };
    },
    async behaviour(x, ctx, result) {
      const { before, minted } = result as { before: TestClock; minted: TokenResponse };
      const after = x.json as TestClock;
      expect(after.offset_seconds).toBe(before.offset_seconds + 7201);
      expect(Date.parse(after.now) - Date.parse(before.now)).toBeGreaterThanOrEqual(7201_000);
      await rejectsWith(clientOnInstance(ctx, { accessToken: minted.access_token }).user.current(), TokenbellAuthenticationError, { status: 401 });
    },
  },
  {
    name: 'moving the clock by no time at all is refused',
    operation: 'advanceTestClock',
    status: 400,
    invalidRequest: 'seconds 0 is under its minimum of 1',
    async call(ctx) {
      await rejectsWith(testHelpers(ctx, asRoot).advanceClock(0), TokenbellValidationError, { status: 400 });
    },
    behaviour: (x) => expect((x.json as { message: string }).message).toMatch(/^400 Bad request - seconds /),
  },
  {
    name: 'a reset brings the instance back to its seeded state: a user added since is gone, the clock and automatic approval are back',
    operation: 'resetTestState',
    status: 204,
    instance: 'disposable',
    async call(ctx) {
      const username = unique('contract-transient');
      await onInstance(ctx).createUser({ username, email: `${username}@example.com`, name: 'Transient', password: 'contract-suite-password' });
      await onInstance(ctx).setAutoApproval('jsmith');
      await onInstance(ctx).advanceClock(60);
      await onInstance(ctx).queueFault(idleFault);
      await testHelpers(ctx, asRoot).reset();
      return username;
    },
    expect: (x) => expect(x.text).toBe(''),
    async behaviour(_x, ctx, username) {
      const helpers = onInstance(ctx);
      await rejectsWith(helpers.mintPersonalAccessToken({ username: username as string, name: 'gone' }), TokenbellValidationError, { status: 400 });
      expect(await helpers.autoApproval()).toEqual({ username: null });
      expect((await helpers.clock()).offset_seconds).toBe(0);
      expect(await helpers.faults()).toEqual([]);
      // The seed is back, not gone: its users and their tokens.
      expect(await clientOnInstance(ctx, { privateToken: users.jsmith.pat }).user.current()).toMatchObject({ username: 'jsmith' });
    },
  },
  {
    name: 'a reset on a database shared by instances is refused',
    operation: 'resetTestState',
    status: 400,
    instance: 'disposable',
    async call(ctx) {
      const username = unique('contract-kept');
      await onInstance(ctx).createUser({ username, email: `${username}@example.com`, name: 'Kept', password: 'contract-suite-password' });
      await rejectsWith(testHelpers(ctx, asRoot).reset(), TokenbellValidationError, { status: 400 });
      return username;
    },
    async behaviour(x, ctx, username) {
      expect((x.json as { message: string }).message).toMatch(/^400 Bad request - store cannot be reset: PostgreSQL/);
      await onInstance(ctx).mintPersonalAccessToken({ username: username as string, name: 'kept' });
    },
  },

  // --- Test helpers: the request journal and faults ------------------------------------------------------------------
  {
    name: 'the request journal lists what a client did, newest first, without a token, secret, password or query string',
    operation: 'listRecordedRequests',
    status: 200,
    async call(ctx) {
      // Each entry is recorded after its answer, once its lookups answer (journalLists): the case waits for each in
      // turn, so that on a busy machine the listing neither misses one nor has them out of order.
      await ctx.setup.testHelpers().clearRequests();
      const tokens = await ctx.setup.token(users.jsmith, { scope: 'read_user' });
      await ctx.setup.journalLists({ method: 'POST', path: '/oauth/token' });
      await ctx.setup.client({ accessToken: tokens.access_token, via: 'query' }).user.current();
      await ctx.setup.journalLists({ method: 'GET', path: '/api/v3/user' });
      await testHelpers(ctx, asRoot).requests({ client_id: exampleApp.clientId, per_page: 2 });
      return tokens;
    },
    expect: (x) => expect(Array.isArray(x.json)).toBe(true),
    behaviour(x, _ctx, tokens) {
      expect(x.json).toEqual([
        // The path the client called: the SDK calls /api/v3.
        expect.objectContaining({ method: 'GET', path: '/api/v3/user', status: 200, client_id: exampleApp.clientId, username: 'jsmith', grant_type: null, fault: null }),
        expect.objectContaining({ method: 'POST', path: '/oauth/token', status: 200, client_id: exampleApp.clientId, username: 'jsmith', grant_type: 'password', fault: null }),
      ]);
      for (const secret of [(tokens as TokenResponse).access_token, exampleApp.clientSecret, users.jsmith.password, 'access_token']) expect(x.text).not.toContain(secret);
    },
  },
  {
    name: 'more recorded requests per page than the document allows is refused',
    operation: 'listRecordedRequests',
    status: 400,
    invalidRequest: 'per_page 1001 is over its maximum of 1000',
    async call(ctx) {
      await rejectsWith(testHelpers(ctx, asRoot).requests({ per_page: 1001 }), TokenbellValidationError, { status: 400 });
    },
    behaviour: (x) => expect((x.json as { message: string }).message).toMatch(/^400 Bad request - per_page /),
  },
  {
    name: 'clearing the request journal leaves it empty',
    operation: 'clearRecordedRequests',
    status: 204,
    async call(ctx) {
      // The token request's entry is recorded once the user it was issued to is looked up, after the answer: on
      // PostgreSQL a busy machine cleared the journal first and recorded the entry after the clear. So the clear comes
      // when the journal lists the token request, and nothing of the case is still to come.
      await ctx.setup.testHelpers().clearRequests();
      await ctx.setup.token(users.jsmith, { scope: 'read_user' });
      await ctx.setup.journalLists({ method: 'POST', path: '/oauth/token' });
      await testHelpers(ctx, asRoot).clearRequests();
    },
    expect: (x) => expect(x.text).toBe(''),
    behaviour: async (_x, ctx) => expect(await ctx.setup.testHelpers().requests()).toEqual([]),
  },
  {
    name: 'the queued faults are listed with how many requests each still answers',
    operation: 'listFaults',
    status: 200,
    async call(ctx) {
      const queued = await ctx.setup.testHelpers().queueFault({ ...idleFault, times: 3 });
      try {
        await testHelpers(ctx, asRoot).faults();
      } finally {
        await ctx.setup.testHelpers().clearFaults();
      }
      return queued;
    },
    expect: (x) => expect(Array.isArray(x.json)).toBe(true),
    behaviour(x, _ctx, queued) {
      expect(x.json).toContainEqual({ id: (queued as Fault).id, match: idleFault.match, answer: idleFault.answer, remaining: 3, created_at: expect.any(String) });
    },
  },
  {
    name: 'a queued fault answers the next matching request once, in the format of its endpoint, and is then gone',
    operation: 'queueFault',
    status: 201,
    async call(ctx) {
      // The password grant of Example App, which setup.token makes: nothing else of the case matches it.
      await testHelpers(ctx, asRoot).queueFault({
        match: { path: '/oauth/token', grant_type: 'password', client_id: exampleApp.clientId },
        answer: { error: 'temporarily_unavailable', message: 'queued by the contract suite' },
      });
      try {
        const attempt = () => ctx.setup.token(users.jsmith, { scope: 'read_user' }).then((tokens) => tokens, (error: unknown) => error);
        // The second attempt's entry is recorded after its answer, once the user its token went to is looked up
        // (journalLists): the journal is read when it lists both.
        await ctx.setup.testHelpers().clearRequests();
        const first = await attempt();
        const second = await attempt();
        await ctx.setup.journalLists({ path: '/oauth/token' }, 2);
        const left = await ctx.setup.testHelpers().faults();
        const journal = await ctx.setup.testHelpers().requests({ path: '/oauth/token', per_page: 2 });
        return { first, second, left, journal };
      } finally {
        await ctx.setup.testHelpers().clearFaults();
      }
    },
    expect: (x) => expect(x.json).toMatchObject({ remaining: expect.any(Number) }),
    behaviour(x, _ctx, result) {
      const { first, second, left, journal } = result as { first: unknown; second: unknown; left: Fault[]; journal: RecordedRequest[] };
      const fault = x.json as Fault;
      expect(fault).toMatchObject({ remaining: 1, answer: { error: 'temporarily_unavailable' }, match: { path: '/oauth/token', grant_type: 'password' } });
      expect(first).toBeInstanceOf(OAuthError);
      expect(first).toMatchObject({ error: 'temporarily_unavailable', error_description: 'queued by the contract suite', status: 400 });
      expect(second).toMatchObject({ access_token: expect.any(String) });
      expect(left.map((f) => f.id)).not.toContain(fault.id);
      expect(journal.map((r) => [r.status, r.fault])).toEqual([
        [200, null],
        [400, fault.id],
      ]);
    },
  },
  {
    name: 'a fault whose answer is a message alone is refused, and nothing is queued',
    operation: 'queueFault',
    status: 400,
    async call(ctx) {
      const before = await ctx.setup.testHelpers().faults();
      await rejectsWith(testHelpers(ctx, asRoot).queueFault({ match: { path: neverRequested }, answer: { message: 'a message answers nothing' } }), TokenbellValidationError, {
        status: 400,
      });
      return before;
    },
    async behaviour(x, ctx, before) {
      expect((x.json as { message: string }).message).toMatch(/^400 Bad request - answer must have a status, an error or a delay_ms/);
      expect(await ctx.setup.testHelpers().faults()).toEqual(before);
    },
  },
  {
    name: 'clearing the faults drops every queued one',
    operation: 'clearFaults',
    status: 204,
    async call(ctx) {
      await ctx.setup.testHelpers().queueFault(idleFault);
      await testHelpers(ctx, asRoot).clearFaults();
    },
    expect: (x) => expect(x.text).toBe(''),
    behaviour: async (_x, ctx) => expect(await ctx.setup.testHelpers().faults()).toEqual([]),
  },

  // --- Test helpers: who may call them, and where --------------------------------------------------------------------
  ...testHelperCalls.map(
    ({ operation, call }): ContractCase => ({
      name: `${operation} by a user who is not an administrator is refused`,
      operation,
      status: 403,
      async call(ctx) {
        await rejectsWith(call(testHelpers(ctx, { privateToken: users.jsmith.pat })), TokenbellPermissionError, { status: 403 });
      },
      expect: (x) => expect(x.json).toEqual({ message: '403 Forbidden - test helpers are for administrators' }),
      // No other token of theirs would do, so no challenge names a scope.
      behaviour: (x) => expect(x.headers.get('www-authenticate')).toBeNull(),
    }),
  ),
  ...testHelperCalls.map(
    ({ operation, call }): ContractCase => ({
      name: `${operation} on an instance without test helpers is not found`,
      operation,
      status: 404,
      instance: 'restricted',
      async call(ctx) {
        await rejectsWith(call(testHelpers(ctx, asRoot)), TokenbellNotFoundError, { status: 404 });
      },
      expect: (x) => expect(x.json).toEqual({ message: '404 Not Found' }),
    }),
  ),

  // --- The landing page and the document ----------------------------------------------------------------------------
  {
    name: 'the landing page for a visitor who has not signed in',
    operation: 'showHome',
    status: 200,
    async call(ctx) {
      await ctx.client().raw.GET('/', { parseAs: 'text' });
    },
    expect: htmlPage,
    behaviour: (x) => expect(x.text).toContain('href="/users/sign_in"'),
  },
  {
    name: 'the landing page for a signed-in user',
    operation: 'showHome',
    status: 200,
    async call(ctx) {
      const session = await ctx.setup.session(users.jsmith);
      await ctx.client().raw.GET('/', withCookie(session));
    },
    expect: htmlPage,
    behaviour: (x) => expect(x.text).toContain('href="/profile/applications"'),
  },
  {
    name: "the demo application's callback page shows the code and how to exchange it",
    operation: 'showDemoCallback',
    status: 200,
    async call(ctx) {
      await ctx.client().raw.GET('/demo/callback', { params: { query: { code: 'Xb7kq2V9mTn4RzL8wPcJ3sYd', state: 'af0ifjsldkj' } }, parseAs: 'text' });
    },
    expect: htmlPage,
    behaviour: (x) => expect(x.text).toContain('grant_type=authorization_code -d code=Xb7kq2V9mTn4RzL8wPcJ3sYd'),
  },
  {
    name: 'the API reference page',
    operation: 'showApiReference',
    status: 200,
    async call(ctx) {
      await ctx.client().raw.GET('/help/api', { parseAs: 'text' });
    },
    expect: htmlPage,
    behaviour: (x) => expect(x.text).toContain('data-document="/openapi.json"'),
  },
  {
    name: 'the document as YAML',
    operation: 'getOpenApiDocument',
    status: 200,
    async call(ctx) {
      await ctx.client().raw.GET('/openapi.yaml', { parseAs: 'text' });
    },
    expect: (x) => expect(x.text).toMatch(/^openapi: 3\.1/),
  },
  {
    name: 'the document as JSON',
    operation: 'getOpenApiDocumentAsJson',
    status: 200,
    async call(ctx) {
      await ctx.client().raw.GET('/openapi.json');
    },
    behaviour: (x) => expect(x.json).toMatchObject({ openapi: '3.1.0', paths: { '/oauth/token': expect.any(Object) } }),
  },

  // --- Operations: health, liveness, readiness, metrics ------------------------------------------------------------
  {
    name: 'health answers that the process is up',
    operation: 'getHealth',
    status: 200,
    async call(ctx) {
      await ctx.client().raw.GET('/-/health', { parseAs: 'text' });
    },
    expect: (x) => expect(x.text).toBe('tokenbell OK'),
  },
  {
    name: 'liveness answers ok',
    operation: 'getLiveness',
    status: 200,
    async call(ctx) {
      await ctx.client().raw.GET('/-/liveness');
    },
  },
  {
    name: 'readiness answers ok with the store check',
    operation: 'getReadiness',
    status: 200,
    async call(ctx) {
      await ctx.client().raw.GET('/-/readiness');
    },
    expect: (x) => expect(x.json).toMatchObject({ status: 'ok', store_check: [{ status: 'ok' }] }),
  },
  {
    name: 'readiness answers 503 while the store cannot take writes',
    operation: 'getReadiness',
    status: 503,
    async call(ctx) {
      const restore = await ctx.setup.storeUnwritable();
      try {
        await ctx.client().raw.GET('/-/readiness');
      } finally {
        await restore();
      }
    },
    expect: (x) => expect(x.json).toMatchObject({ status: 'failed' }),
    behaviour: (x, ctx) =>
      expect(x.json).toMatchObject({
        store_check: [{ status: 'failed', message: ctx.store === 'file' ? expect.stringMatching(/not writable \(ENOENT\)/) : 'the database takes no writes (it is read-only)' }],
      }),
  },
  {
    name: 'metrics answer the Prometheus text format',
    operation: 'getMetrics',
    status: 200,
    async call(ctx) {
      await ctx.client().raw.GET('/-/metrics', { parseAs: 'text' });
    },
    expect: (x) => expect(x.text).toContain('tokenbell_token_grants_total'),
  },
  {
    name: 'metrics answer OpenMetrics to whoever asks for it by Accept',
    operation: 'getMetrics',
    status: 200,
    async call(ctx) {
      await ctx.client().raw.GET('/-/metrics', { parseAs: 'text', headers: { Accept: 'application/openmetrics-text; version=1.0.0' } });
    },
    expect: (x) => {
      expect(x.contentType).toBe('application/openmetrics-text');
      // OpenMetrics names a counter's family without `_total`, its samples with it.
      expect(x.text).toContain('# TYPE tokenbell_token_grants counter\n');
      expect(x.text.endsWith('# EOF\n')).toBe(true);
    },
  },
  ...(
    [
      ['getHealth', (c) => c.raw.GET('/-/health', { parseAs: 'text' })],
      ['getLiveness', (c) => c.raw.GET('/-/liveness')],
      ['getReadiness', (c) => c.raw.GET('/-/readiness')],
      ['getMetrics', (c) => c.raw.GET('/-/metrics', { parseAs: 'text' })],
    ] as const satisfies readonly (readonly [string, (client: TokenbellClient) => Promise<unknown>])[]
  ).map(
    ([operation, get]): ContractCase => ({
      name: `${operation} from an address outside the monitoring allowlist is not found`,
      operation,
      status: 404,
      instance: 'restricted',
      async call(ctx) {
        await get(ctx.client());
      },
      expect: (x) => expect(x.json).toEqual({ message: '404 Not Found' }),
    }),
  ),

  // --- Limits: bodies past 100 kB, too many failed passwords ------------------------------------------------------
  ...oversized.map(
    ({ operation, method, path, form, credentials, invalid }): ContractCase => ({
      name: `${operation} with a body past the 100 kB limit is refused before it is read`,
      operation,
      status: 413,
      ...(invalid ? { invalidRequest: invalid } : {}),
      async call(ctx) {
        const headers: Record<string, string> = { 'Content-Type': 'application/x-www-form-urlencoded' };
        if (credentials === 'client') headers.Authorization = `Basic ${btoa(`${exampleApp.clientId}:${exampleApp.clientSecret}`)}`;
        if (credentials === 'session') headers.Cookie = staleSession.cookie;
        const body = `${new URLSearchParams(form).toString()}${'&'.repeat(oversize)}`;
        await ctx.fetch(new Request(new URL(path, ctx.baseUrl), { method, headers, body }));
      },
      expect: (x) => {
        if (x.contentType === 'text/html') htmlPage(x);
      },
    }),
  ),
  {
    // Every field at its maxLength in 4-byte characters, each percent-encoded to 12 bytes: a valid form past 100 kB.
    name: 'createApplication with a valid form past the 100 kB limit is refused before it is read',
    operation: 'createApplication',
    status: 413,
    async call(ctx) {
      const body = largestApplicationForm();
      expect(new TextEncoder().encode(new URLSearchParams(body).toString()).length).toBeGreaterThan(100 * 1024);
      await ctx.client().raw.POST('/profile/applications', { body, ...formOf(staleSession) });
    },
    expect: htmlPage,
  },
  ...oversizedUpdates.map(
    ({ operation, call }): ContractCase => ({
      name: `${operation} with a valid body past the 100 kB limit is refused before it is read`,
      operation,
      status: 413,
      async call(ctx) {
        await rejectsWith(call(ctx.client({ privateToken: users.jsmith.pat })), TokenbellApiError, { status: 413 });
      },
      expect: (x) => expect(x.json).toEqual({ message: '413 Request Entity Too Large' }),
    }),
  ),
  {
    name: 'emitNotificationEvent with a valid body past the 100 kB limit is refused before it is read',
    operation: 'emitNotificationEvent',
    status: 413,
    async call(ctx) {
      const before = idsOf(await ctx.setup.notificationMessages({ username: 'jsmith', per_page: 100 }));
      await rejectsWith(testHelpers(ctx, { privateToken: users.root.pat }).emitNotificationEvent('acme/widgets', paddedEvent), TokenbellApiError, { status: 413 });
      return before;
    },
    expect: (x) => expect(x.json).toEqual({ message: '413 Request Entity Too Large' }),
    async behaviour(_x, ctx, before) {
      expect(idsOf(await ctx.setup.notificationMessages({ username: 'jsmith', per_page: 100 }))).toEqual(before);
    },
  },
  ...largeBodies.map(
    ({ operation, call }): ContractCase => ({
      name: `${operation} with a valid body past the 100 kB limit is refused before it is read`,
      operation,
      status: 413,
      async call(ctx) {
        await rejectsWith(call(testHelpers(ctx, asRoot)), TokenbellApiError, { status: 413 });
      },
      expect: (x) => expect(x.json).toEqual({ message: '413 Request Entity Too Large' }),
    }),
  ),
  ...boundedJsonBodies.flatMap((operation) => {
    const { call } = testHelperCalls.find((c) => c.operation === operation)!;
    return (['whitespace', 'field'] as const).map(
      (padding): ContractCase => ({
        name: paddedBodyCase[padding](operation),
        operation,
        status: 413,
        ...(padding === 'field' ? { invalidRequest: 'the schema allows no field but its own (additionalProperties: false)' } : {}),
        async call(ctx) {
          const helpers = createTokenbellTestHelpers({ baseUrl: ctx.baseUrl, fetch: paddedBody(ctx.fetch, padding), auth: asRoot });
          await rejectsWith(call(helpers), TokenbellApiError, { status: 413 });
        },
        expect: (x) => expect(x.json).toEqual({ message: '413 Request Entity Too Large' }),
      }),
    );
  }),
  {
    name: 'the password grant for a login with too many failures is refused before the password is checked',
    operation: 'createToken',
    status: 429,
    async call(ctx) {
      await ctx.setup.exhaustLogin(throttledLogin);
      await rejectsWith(passwordGrant({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, username: throttledLogin, password: 'anything' }), OAuthError, {
        error: 'invalid_request',
        status: 429,
      });
    },
    expect: (x) => expect(Number(x.headers.get('retry-after'))).toBeGreaterThan(0),
  },
  {
    // On the mock only (casesNotApplicable): the subject channel asks it for the 429.
    name: deviceFloodCase,
    operation: 'authorizeDevice',
    status: 429,
    async call(ctx) {
      await rejectsWith(startDeviceAuthorization({ baseUrl: ctx.baseUrl, fetch: ctx.fetch, clientId: publicApp.clientId }), OAuthError, { error: 'invalid_request', status: 429 });
    },
    expect: (x) => expect(Number(x.headers.get('retry-after'))).toBeGreaterThan(0),
  },
  {
    name: 'a device code from an account with too many wrong ones is refused before it is looked up',
    operation: 'confirmDeviceAuthorization',
    status: 429,
    async call(ctx) {
      const session = await ctx.setup.exhaustDeviceCodes();
      const { user_code } = await ctx.setup.deviceAuthorization();
      await ctx.client().raw.POST('/oauth/device/confirm', { body: { _csrf: session.csrf, user_code }, ...formOf(session) });
    },
    expect: (x) => {
      htmlPage(x);
      expect(Number(x.headers.get('retry-after'))).toBeGreaterThan(0);
    },
  },
  {
    name: 'a device decision from an account with too many wrong codes is refused before it is recorded',
    operation: 'decideDeviceAuthorization',
    status: 429,
    async call(ctx) {
      const session = await ctx.setup.exhaustDeviceCodes();
      const { device_code, user_code } = await ctx.setup.deviceAuthorization();
      await ctx.client().raw.POST('/oauth/device', { body: { _csrf: session.csrf, user_code, decision: 'approve' }, ...formOf(session) });
      return device_code;
    },
    expect: (x) => {
      htmlPage(x);
      expect(Number(x.headers.get('retry-after'))).toBeGreaterThan(0);
    },
    async behaviour(_x, ctx, deviceCode) {
      expect(await ctx.setup.pollDevice(deviceCode as string)).toEqual({ status: 400, error: 'authorization_pending' });
    },
  },
  {
    name: 'the sign-in form for a login with too many failures is refused before the password is checked',
    operation: 'signIn',
    status: 429,
    async call(ctx) {
      await ctx.setup.exhaustLogin(throttledLogin);
      const session = await ctx.setup.anonymousSession();
      await ctx.client().raw.POST('/users/sign_in', { body: { _csrf: session.csrf, login: throttledLogin, password: 'anything' }, ...formOf(session) });
    },
    expect: (x) => {
      htmlPage(x);
      expect(Number(x.headers.get('retry-after'))).toBeGreaterThan(0);
    },
  },
];
