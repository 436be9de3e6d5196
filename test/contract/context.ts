// What a contract case gets to work with: a recording `fetch` for the one request under test (the subject), and a
// setup channel for everything the case needs beforehand (tokens, a signed-in session, an application).
import {
  createTokenbellClient,
  exchangeCode,
  passwordGrant,
  startDeviceAuthorization,
  type DeviceAuthorizationResponse,
  type ExchangeCodeOptions,
  type FetchLike,
  type TokenbellAuth,
  type TokenbellClient,
  type TokenResponse,
} from '../../packages/sdk/src/index.js';
import {
  createTokenbellTestHelpers,
  type NotificationEventRequest,
  type NotificationEventResult,
  type NotificationMessage,
  type NotificationMessageQuery,
  type TokenbellTestHelpers,
} from '../../packages/sdk/src/test-helpers.js';
import { consentFields, csrfOf } from '../../packages/server/test/support/agent.js';
import { exampleAccounts, exampleApplication } from '../../packages/server/test/support/example-seed.js';
import { administrator, publicApplication } from './seed.js';

/** Which requests of the journal to wait for (listRecordedRequests' filters). */
type JournalQuery = Omit<NonNullable<Parameters<TokenbellTestHelpers['requests']>[0]>, 'per_page'>;

export type TargetKind = 'server' | 'mock' | 'proxy';

/** One request and its answer, as they went over the wire. */
export interface Exchange {
  method: string;
  url: URL;
  status: number;
  headers: Headers;
  /** The media type without parameters, or '' when there is none. */
  contentType: string;
  text: string;
  /** The parsed body when the answer is JSON. */
  json: unknown;
}

/** The example fixture's accounts (packages/server/fixtures/example-seed.json), and the contract seed's administrator. */
export const users = { ...exampleAccounts, root: administrator } as const;
export type SeedUser = (typeof users)[keyof typeof users];
export const exampleApp = exampleApplication;
/** The contract seed's public application (seed.ts): no App Secret, client_id alone, PKCE. */
export const publicApp = { clientId: publicApplication.clientId, redirectUri: publicApplication.redirectUri } as const;
/**
 * An application that setup can get codes and tokens for: Example App (confidential), the public one, or one a case
 * registered (its App Secret, if it has one).
 */
export type SetupApp = { clientId: string; clientSecret?: string; redirectUri: string };

/** A browser session: the cookie to send and the CSRF token its pages print. */
export interface Session {
  cookie: string;
  csrf: string;
}

/** Where setup requests go and what they cannot do on a target without state. */
export interface SetupChannel {
  /** An access token from the password grant (through Example App unless `client: false`). */
  token(user: SeedUser, options?: { scope?: string; client?: boolean }): Promise<TokenResponse>;
  /** Tokens from the authorization code grant (sign-in, consent, exchange) for `app`, with a refresh token. */
  codeTokens(user: SeedUser, app?: SetupApp): Promise<TokenResponse>;
  /** A fresh single-use code for `app` (Example App by default), approved by `user`, with the PKCE verifier it needs. */
  code(user: SeedUser, app?: SetupApp): Promise<{ code: string; codeVerifier: string }>;
  /** Trades a code (and its PKCE verifier, if any) for tokens at the token endpoint, as `app` (Example App by default). */
  exchange(code: string, codeVerifier?: string, app?: SetupApp): Promise<TokenResponse>;
  /** A session without a user: the sign-in page's cookie and CSRF token. */
  anonymousSession(): Promise<Session>;
  /** A signed-in session. */
  session(user: SeedUser): Promise<Session>;
  /** A two-factor user's session after the right password, with the code page's CSRF token. */
  codeStep(user: SeedUser): Promise<Session>;
  /** The consent form's fields (CSRF token included) for Example App, as `session` sees them. */
  consentFields(session: Session, params?: Record<string, string>): Promise<Record<string, string>>;
  /** Registers an application for the session's user and answers its numeric id. */
  newApplication(session: Session): Promise<number>;
  /** Makes `user` authorize Example App (a token through it) and answers the application's numeric id. */
  authorizedApplication(user: SeedUser, session: Session): Promise<number>;
  /** Creates a personal access token for the session's user and answers its numeric id. */
  newPersonalAccessToken(session: Session): Promise<number>;
  /** Whether an access token still works (GET /oauth/token/info). */
  tokenWorks(accessToken: string): Promise<boolean>;
  /** An SDK client on the setup channel, for what a case reads from the API before or after its subject request. */
  client(auth: TokenbellAuth | null): TokenbellClient;
  /**
   * The test helpers as the seed's administrator on the setup channel, for state a case shapes beforehand or puts
   * back afterwards (automatic approval, faults); on the mock, the mock's answers (its examples, no state).
   */
  testHelpers(): TokenbellTestHelpers;
  /** Revokes the session user's password grant tokens, if any, so that none is left. */
  revokePasswordGrant(session: Session): Promise<void>;
  /**
   * Waits until the request journal lists `count` requests matching `query`; at once on the mock, which keeps none.
   * An answer reaches the client before its entry is recorded (the entry waits for its lookups, such as the user a
   * token was issued to, which on PostgreSQL are queries), so a case that reads or clears the journal right after its
   * requests waits for them here, having cleared the journal first so that only its own can match.
   */
  journalLists(query: JournalQuery, count?: number): Promise<void>;
  /**
   * Records a notification event on `project` through the test helpers, as the seed's administrator, and answers it
   * with its recipients; on the mock, the document's example event.
   */
  notificationEvent(project: string, event: NotificationEventRequest): Promise<NotificationEventResult>;
  /**
   * The notification mail the server queued (the test helpers' listing, as the seed's administrator), newest first;
   * nothing on the mock.
   */
  notificationMessages(query?: NotificationMessageQuery): Promise<NotificationMessage[]>;
  /** Fails password grants for `login` until the throttle refuses it (429); what comes next for it is refused too. */
  exhaustLogin(login: string): Promise<void>;
  /**
   * A device authorization of `app` (the public application by default), answered by `answer.user` when given, through
   * the test helpers; on the mock, the document's example.
   */
  deviceAuthorization(app?: SetupApp, answer?: { user: SeedUser; decision: 'approve' | 'deny' }): Promise<DeviceAuthorizationResponse>;
  /** One poll of the token endpoint with the device code, as `app` (the public application by default). */
  pollDevice(deviceCode: string, app?: SetupApp): Promise<{ status: number; error: string | undefined }>;
  /**
   * The session of a user of the suite's own whose wrong device codes the throttle now refuses (429); the same user
   * every time, so the run adds one user's wrong codes to the address's count, once.
   */
  exhaustDeviceCodes(): Promise<Session>;
  /**
   * Makes the server's store unable to take writes (its data directory moved away, or its database read-only), so
   * that readiness answers 503, and answers the function that undoes it. Meant for one request in between: nothing
   * is lost, but a write in between would fail.
   */
  storeUnwritable(): Promise<() => Promise<void>>;
}

export interface CaseContext {
  target: TargetKind;
  /** Which store the target's servers run on: PostgreSQL in the `postgres` test project. */
  store: 'file' | 'postgres';
  /** Where the subject request goes. */
  baseUrl: string;
  /** The subject channel: records the exchange, never follows redirects, and asks the mock for the case's status. */
  fetch: FetchLike;
  /** An SDK client on the subject channel. */
  client(auth?: TokenbellAuth | null): TokenbellClient;
  setup: SetupChannel;
}

async function toExchange(request: Request, response: Response): Promise<Exchange> {
  const text = await response.clone().text();
  const contentType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  let json: unknown;
  if (/^application\/([\w.+-]*\+)?json$/.test(contentType) && text !== '') {
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  return { method: request.method, url: new URL(request.url), status: response.status, headers: response.headers, contentType, text, json };
}

/**
 * A fetch that never follows redirects (each answer is checked on its own, and a 302's Location is what the
 * document describes) and hands every exchange to `record`. `prefer` goes out as Prism's Prefer header.
 */
export function recordingFetch(record: (exchange: Exchange) => void, prefer?: string): FetchLike {
  return async (input) => {
    const request = new Request(input, { redirect: 'manual' });
    if (prefer) request.headers.set('Prefer', prefer);
    const response = await fetch(request);
    record(await toExchange(request, response));
    return response;
  };
}

const noFollow: FetchLike = (input) => fetch(new Request(input, { redirect: 'manual' }));

/**
 * The code exchange as `app`: which of the SDK's two shapes (a confidential client, or a public one with its verifier)
 * the app and verifier make is the server's to judge, so they are passed on as they are.
 */
const exchangeAt = (baseUrl: string, code: string, codeVerifier: string | undefined, app: SetupApp) =>
  exchangeCode({ baseUrl, fetch: noFollow, ...app, code, ...(codeVerifier === undefined ? {} : { codeVerifier }) } as ExchangeCodeOptions);

const sessionCookieOf = (response: Response): string | undefined => {
  for (const line of response.headers.getSetCookie()) {
    const pair = line.split(';')[0]!;
    if (pair.startsWith('tokenbell.sid=') && pair !== 'tokenbell.sid=') return pair;
  }
  return undefined;
};
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const formHeaders = (cookie: string) => ({ 'content-type': 'application/x-www-form-urlencoded', cookie });

/**
 * Setup against a real server: sign in, consent, register, all over HTTP as a browser would; `storeUnwritable` is the
 * server's own (processes.ts).
 */
export function serverSetup(baseUrl: string, storeUnwritable: SetupChannel['storeUnwritable']): SetupChannel {
  const get = async (path: string, session?: Session) => {
    const response = await noFollow(new Request(baseUrl + path, { headers: session ? { cookie: session.cookie } : {} }));
    return { response, text: await response.text() };
  };
  const post = async (path: string, session: Session, fields: Record<string, string>) => {
    const response = await noFollow(new Request(baseUrl + path, { method: 'POST', headers: formHeaders(session.cookie), body: form({ _csrf: session.csrf, ...fields }) }));
    return { response, text: await response.text() };
  };
  const asAdministrator = () => createTokenbellTestHelpers({ baseUrl, fetch: noFollow, token: administrator.pat });
  const expectStatus = (what: string, response: Response, text: string, status: number) => {
    if (response.status !== status) throw new Error(`setup: ${what} answered ${response.status}, not ${status}:\n${text.slice(0, 1000)}`);
  };

  const setup: SetupChannel = {
    token: (user, { scope = 'api', client = true } = {}) =>
      passwordGrant({
        baseUrl,
        fetch: noFollow,
        username: user.username,
        password: user.password,
        scope,
        ...(client ? { clientId: exampleApp.clientId, clientSecret: exampleApp.clientSecret } : {}),
      }),
    async anonymousSession() {
      // Before sign-in there is no session, only the sign-in form's CSRF cookie.
      const { response, text } = await get('/users/sign_in');
      const cookie = response.headers
        .getSetCookie()
        .map((line) => line.split(';')[0]!)
        .join('; ');
      if (!cookie) throw new Error('setup: the sign-in page set no CSRF cookie');
      return { cookie, csrf: csrfOf(text) };
    },
    async session(user) {
      const anonymous = await setup.anonymousSession();
      const { response, text } = await post('/users/sign_in', anonymous, { login: user.username, password: user.password });
      expectStatus('sign-in', response, text, 302);
      const cookie = sessionCookieOf(response);
      if (!cookie) throw new Error('setup: signing in set no session cookie');
      const page = await get('/profile/applications', { cookie, csrf: '' });
      expectStatus('the applications page', page.response, page.text, 200);
      return { cookie, csrf: csrfOf(page.text) };
    },
    async codeStep(user) {
      const anonymous = await setup.anonymousSession();
      const { response, text } = await post('/users/sign_in', anonymous, { login: user.username, password: user.password });
      expectStatus('the password step', response, text, 200);
      const session = sessionCookieOf(response);
      if (!session) throw new Error('setup: the right password of a two-factor account started no session');
      return { cookie: `${anonymous.cookie}; ${session}`, csrf: csrfOf(text) };
    },
    async consentFields(session, params = {}) {
      const query = new URLSearchParams({ client_id: exampleApp.clientId, redirect_uri: exampleApp.redirectUri, response_type: 'code', ...params });
      const { response, text } = await get(`/oauth/authorize?${query}`, session);
      expectStatus('the consent page', response, text, 200);
      return consentFields(text);
    },
    async code(user, app = exampleApp) {
      const session = await setup.session(user);
      const codeVerifier = 'contract-suite-code-verifier-0123456789abcdefghijklmno';
      const challenge = Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(codeVerifier))).toString('base64url');
      const params = { client_id: app.clientId, redirect_uri: app.redirectUri, response_type: 'code', state: 'setup', code_challenge: challenge, code_challenge_method: 'S256' };
      let { response, text } = await get(`/oauth/authorize?${new URLSearchParams(params)}`, session);
      // A user holding a live token of a confidential app with these scopes is sent back with a code at once, as on the
      // service; otherwise the consent page asks.
      if (response.status !== 302) {
        expectStatus('the consent page', response, text, 200);
        ({ response, text } = await post('/oauth/authorize', session, { ...consentFields(text), decision: 'approve' }));
        expectStatus('approving the consent form', response, text, 302);
      }
      const code = new URL(response.headers.get('location') ?? '').searchParams.get('code');
      if (!code) throw new Error(`setup: no code in ${response.headers.get('location')}`);
      return { code, codeVerifier };
    },
    async codeTokens(user, app = exampleApp) {
      const { code, codeVerifier } = await setup.code(user, app);
      return setup.exchange(code, codeVerifier, app);
    },
    exchange: (code, codeVerifier, app = exampleApp) => exchangeAt(baseUrl, code, codeVerifier, app),
    async newApplication(session) {
      const name = `contract app ${Math.random().toString(36).slice(2, 10)}`;
      const { response, text } = await post('/profile/applications', session, { name, redirect_uri: 'https://app.example.com/callback', scopes: 'api' });
      expectStatus('registering an application', response, text, 201);
      return idFromPage(await get('/profile/applications', session), /action="\/profile\/applications\/(\d+)\/delete"[^]*?<\/form>/g, name);
    },
    async authorizedApplication(user, session) {
      await setup.token(user, { scope: 'read_user' });
      const page = await get('/profile/applications', session);
      const id = /action="\/profile\/authorized_applications\/(\d+)\/revoke"/.exec(page.text)?.[1];
      if (!id) throw new Error(`setup: Example App is not among the authorized applications:\n${page.text.slice(0, 2000)}`);
      return Number(id);
    },
    async newPersonalAccessToken(session) {
      const name = `contract ${Math.random().toString(36).slice(2, 10)}`;
      const { response, text } = await post('/profile/personal_access_tokens', session, { name, scopes: 'read_user' });
      expectStatus('creating a personal access token', response, text, 201);
      return idFromPage(await get('/profile/personal_access_tokens', session), /action="\/profile\/personal_access_tokens\/(\d+)\/revoke"[^]*?<\/form>/g, name);
    },
    async tokenWorks(accessToken) {
      const { response } = await createTokenbellClient({ baseUrl, fetch: noFollow, auth: { accessToken } }).raw.GET('/oauth/token/info');
      return response.status === 200;
    },
    client: (auth) => createTokenbellClient({ baseUrl, fetch: noFollow, auth }),
    testHelpers: asAdministrator,
    notificationEvent: (project, event) => asAdministrator().emitNotificationEvent(project, event),
    notificationMessages: (query) => asAdministrator().notificationMessages(query),
    async revokePasswordGrant(session) {
      const { response, text } = await post('/profile/authorized_applications/password_grant/revoke', session, {});
      if (response.status !== 302 && response.status !== 404) expectStatus('revoking the password grant tokens', response, text, 302);
    },
    async journalLists(query, count = 1) {
      // Bounded, so that a request never recorded fails here, named, rather than as a case's wrong listing.
      const deadline = performance.now() + 10_000;
      for (;;) {
        if ((await asAdministrator().requests({ ...query, per_page: count })).length >= count) return;
        if (performance.now() > deadline) {
          const all = await asAdministrator().requests();
          throw new Error(`setup: after 10 s the request journal does not list ${count} requests matching ${JSON.stringify(query)}:\n${JSON.stringify(all, null, 2)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async exhaustLogin(login) {
      // The default policy refuses a login after 10 failures; a login already refused costs nothing more.
      for (let attempt = 0; attempt < 20; attempt++) {
        const response = await noFollow(
          new Request(`${baseUrl}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form({ grant_type: 'password', username: login, password: 'wrong' }) }),
        );
        await response.body?.cancel();
        if (response.status === 429) return;
      }
      throw new Error(`setup: the password grant never refused ${login} with 429`);
    },
    async deviceAuthorization(app = publicApp, answer) {
      const started = await startDeviceAuthorization({ baseUrl, fetch: noFollow, clientId: app.clientId, ...(app.clientSecret ? { clientSecret: app.clientSecret } : {}) });
      if (answer) await asAdministrator().decideDeviceAuthorization({ user_code: started.user_code, username: answer.user.username, decision: answer.decision });
      return started;
    },
    async pollDevice(deviceCode, app = publicApp) {
      const fields = { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: deviceCode, client_id: app.clientId, ...(app.clientSecret ? { client_secret: app.clientSecret } : {}) };
      const response = await noFollow(new Request(`${baseUrl}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form(fields) }));
      const body = (await response.json()) as { error?: string };
      return { status: response.status, error: body.error };
    },
    async exhaustDeviceCodes() {
      const user = { username: 'contract-device-throttled', password: 'contract-suite-device-throttled' } as unknown as SeedUser;
      // There from the second call on, which is refused as taken.
      await asAdministrator()
        .createUser({ username: user.username, email: 'contract-device-throttled@example.com', name: 'Throttled', password: user.password })
        .catch(() => undefined);
      const session = await setup.session(user);
      // The default policy refuses an account's codes after 10 wrong ones; once refused, a code costs nothing more.
      for (let attempt = 0; attempt < 20; attempt++) {
        const { response } = await post('/oauth/device/confirm', session, { user_code: 'ZZZZ-ZZZ0' });
        if (response.status === 429) return session;
      }
      throw new Error('setup: the device pages never refused the wrong codes with 429');
    },
    storeUnwritable,
  };
  return setup;
}

/** The id in the form whose button names `name` (the forms list one row per item). */
function idFromPage(page: { text: string }, forms: RegExp, name: string): number {
  for (const m of page.text.matchAll(forms)) if (m[0].includes(name)) return Number(m[1]);
  throw new Error(`setup: no form for "${name}" in the page:\n${page.text.slice(0, 2000)}`);
}

/**
 * Setup against the mock, which keeps no state: tokens and codes come from its examples; sessions, ids and forms
 * are the document's own example values. Prism only checks that a session cookie is present.
 */
export function mockSetup(baseUrl: string): SetupChannel {
  const session: Session = { cookie: 'tokenbell.sid=contract-suite-mock-session', csrf: '7b1f3c2d9e8a4b6c5d0e1f2a3b4c5d6e' };
  return {
    token: (user, { scope = 'api' } = {}) => passwordGrant({ baseUrl, fetch: noFollow, username: user.username, password: user.password, scope }),
    codeTokens: (_user, app = exampleApp) =>
      exchangeCode({ baseUrl, fetch: noFollow, ...app, code: 'Xb7kq2V9mTn4RzL8wPcJ3sYd', codeVerifier: 'contract-suite-code-verifier-0123456789abcdefghijklmno' }),
    code: async () => ({ code: 'Xb7kq2V9mTn4RzL8wPcJ3sYd', codeVerifier: 'contract-suite-code-verifier-0123456789abcdefghijklmno' }),
    exchange: (code, codeVerifier, app = exampleApp) => exchangeAt(baseUrl, code, codeVerifier, app),
    client: (auth) => createTokenbellClient({ baseUrl, fetch: noFollow, auth }),
    testHelpers: () => createTokenbellTestHelpers({ baseUrl, fetch: noFollow, token: administrator.pat }),
    anonymousSession: async () => session,
    session: async () => session,
    codeStep: async () => session,
    consentFields: async (s, params = {}) => ({
      _csrf: s.csrf,
      client_id: exampleApp.clientId,
      redirect_uri: exampleApp.redirectUri,
      response_type: 'code',
      ...params,
    }),
    newApplication: async () => 7,
    authorizedApplication: async () => 7,
    newPersonalAccessToken: async () => 4,
    tokenWorks: async () => true,
    // The event of emitNotificationEvent's 201 example, which listNotificationMessages' 200 example is a message of.
    notificationEvent: async () => ({
      id: 'V1StGXR8_Z5jdHi6B-myT',
      kind: 'failed_pipeline',
      project_id: 1,
      title: 'Pipeline #42 failed on main',
      author: 'jsmith',
      created_at: '2026-11-25T10:00:00.000Z',
      recipients: [{ user_id: 1, username: 'jsmith', email: 'jsmith@example.com', reason: 'participating' }],
    }),
    notificationMessages: async () => [],
    exhaustLogin: async () => undefined,
    deviceAuthorization: (app = publicApp) => startDeviceAuthorization({ baseUrl, fetch: noFollow, clientId: app.clientId }),
    pollDevice: async () => ({ status: 400, error: 'authorization_pending' }),
    exhaustDeviceCodes: async () => session,
    revokePasswordGrant: async () => undefined,
    journalLists: async () => undefined,
    storeUnwritable: async () => async () => undefined,
  };
}
