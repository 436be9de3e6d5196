import { describe, expectTypeOf, it } from 'vitest';
import {
  authorizationUrl,
  callbackParams,
  type components,
  createTokenbellClient,
  exchangeCode,
  type GlobalNotificationSettings,
  type NotificationSettings,
  OAuthError,
  type OAuthErrorCode,
  passwordGrant,
  pollDeviceToken,
  refresh,
  revoke,
  startDeviceAuthorization,
  TokenbellApiError,
  type TokenbellAuth,
  TokenbellAuthenticationError,
  type TokenResponse,
  type User,
} from '../src/index.js';

const client = createTokenbellClient({ baseUrl: 'http://127.0.0.1:4010' });

describe('resource helpers', () => {
  it('answer the document types', () => {
    expectTypeOf(client.user.current()).resolves.toEqualTypeOf<components['schemas']['User']>();
    expectTypeOf(client.notificationSettings.global.get()).resolves.toEqualTypeOf<components['schemas']['GlobalNotificationSettings']>();
    expectTypeOf(client.notificationSettings.group(1).get()).resolves.toEqualTypeOf<components['schemas']['NotificationSettings']>();
    expectTypeOf(client.notificationSettings.project('acme/widgets').update({ level: 'custom', new_note: true }))
      .resolves.toEqualTypeOf<NotificationSettings>();
  });

  it('answer what the raw client answers for the same path', async () => {
    const { data: user } = await client.raw.GET('/api/v3/user');
    expectTypeOf(user).toEqualTypeOf<User | undefined>();
    const { data: global } = await client.raw.PUT('/api/v3/notification_settings', { body: { level: 'watch' } });
    expectTypeOf(global).toEqualTypeOf<GlobalNotificationSettings | undefined>();
    const { data: project } = await client.raw.GET('/api/v3/projects/{id}/notification_settings', {
      params: { path: { id: 'acme/widgets' } },
    });
    expectTypeOf(project).toEqualTypeOf<NotificationSettings | undefined>();
  });

  it('narrow on the level', async () => {
    const settings = await client.notificationSettings.project(5).get();
    if (settings.level === 'custom') expectTypeOf(settings.events.failed_pipeline).toEqualTypeOf<boolean>();
    // @ts-expect-error events exist only for the custom level
    void settings.events;
  });

  it('accept ids and paths only', () => {
    expectTypeOf(client.notificationSettings.group).parameter(0).toEqualTypeOf<number | string>();
    // @ts-expect-error an object is not an id
    client.notificationSettings.project({ id: 5 });
  });

  it('reject a wrong level and a wrong parameter', () => {
    // @ts-expect-error 'loud' is not a notification level
    void client.notificationSettings.project('acme/widgets').update({ level: 'loud' });
    // @ts-expect-error 'global' is a level for groups and projects, not for the global setting
    void client.notificationSettings.global.update({ level: 'global' });
    // @ts-expect-error notification_email belongs to the global setting only
    void client.notificationSettings.group('acme').update({ notification_email: 'a@example.com' });
    // @ts-expect-error misspelt event
    void client.notificationSettings.global.update({ new_notes: true });
    // @ts-expect-error events are booleans (or 'true'/'false' as the document allows), not numbers
    void client.notificationSettings.global.update({ new_note: 1 });
  });
});

describe('raw client', () => {
  it('rejects a path the document does not have', () => {
    // @ts-expect-error no such path
    void client.raw.GET('/api/v3/users');
    // @ts-expect-error the path exists, but not with DELETE
    void client.raw.DELETE('/api/v3/user');
  });

  it('rejects a wrong or missing parameter', () => {
    // @ts-expect-error the path parameter is `id`
    void client.raw.GET('/api/v3/groups/{id}/notification_settings', { params: { path: { group: 1 } } });
    // @ts-expect-error the path parameter is required
    void client.raw.GET('/api/v3/groups/{id}/notification_settings');
    // @ts-expect-error wrong level in the query
    void client.raw.PUT('/api/v3/groups/{id}/notification_settings', { params: { path: { id: 1 }, query: { level: 'loud' } } });
  });

  it('types OAuth bodies by grant', () => {
    void client.raw.POST('/oauth/token', { body: { grant_type: 'password', username: 'u', password: 'p' } });
    // @ts-expect-error the password grant needs a password
    void client.raw.POST('/oauth/token', { body: { grant_type: 'password', username: 'u' } });
    // @ts-expect-error implicit is not a grant type of the document
    void client.raw.POST('/oauth/token', { body: { grant_type: 'implicit' } });
  });
});

describe('auth', () => {
  it('accepts the three methods and null', () => {
    client.setAuth({ accessToken: 't', via: 'header' });
    client.setAuth({ accessToken: 't', via: 'query' });
    client.setAuth({ privateToken: 'p' });
    client.setAuth(null);
    // @ts-expect-error no such transport
    client.setAuth({ accessToken: 't', via: 'cookie' });
    // @ts-expect-error a token is needed
    client.setAuth({});
    expectTypeOf<{ privateToken: string }>().toExtend<TokenbellAuth>();
  });
});

describe('OAuth helpers', () => {
  it('answer the token response of the document', () => {
    expectTypeOf<TokenResponse>().toEqualTypeOf<components['schemas']['TokenResponse']>();
    expectTypeOf(exchangeCode({ baseUrl: '', clientId: '', clientSecret: '', code: '', redirectUri: '' })).resolves.toEqualTypeOf<TokenResponse>();
    expectTypeOf(passwordGrant({ baseUrl: '', username: '', password: '' })).resolves.toEqualTypeOf<TokenResponse>();
    expectTypeOf(refresh({ baseUrl: '', refreshToken: '', clientId: '', clientSecret: '' })).resolves.toEqualTypeOf<TokenResponse>();
    expectTypeOf(revoke({ baseUrl: '', token: '', clientId: '', clientSecret: '' })).resolves.toEqualTypeOf<void>();
    expectTypeOf<TokenResponse['token_type']>().toEqualTypeOf<'bearer'>();
    expectTypeOf<TokenResponse['refresh_token']>().toEqualTypeOf<string | undefined>();
  });

  it('take a public client without a secret, but then only with a PKCE verifier for the code', () => {
    expectTypeOf(exchangeCode({ baseUrl: '', clientId: '', code: '', redirectUri: '', codeVerifier: '' })).resolves.toEqualTypeOf<TokenResponse>();
    // @ts-expect-error a public client (no secret) always uses PKCE, so the verifier is required
    void exchangeCode({ baseUrl: '', clientId: '', code: '', redirectUri: '' });
    expectTypeOf(refresh({ baseUrl: '', refreshToken: '', clientId: '' })).resolves.toEqualTypeOf<TokenResponse>();
    expectTypeOf(revoke({ baseUrl: '', token: '', clientId: '' })).resolves.toEqualTypeOf<void>();
    // @ts-expect-error a client is always named
    void refresh({ baseUrl: '', refreshToken: '', clientSecret: '' });
  });

  it('make the verifier non-optional exactly when PKCE is on', () => {
    const options = { baseUrl: '', clientId: '', redirectUri: '' };
    expectTypeOf(authorizationUrl(options)).resolves.toHaveProperty('codeVerifier').toEqualTypeOf<string>();
    expectTypeOf(authorizationUrl({ ...options, pkce: false })).resolves.not.toHaveProperty('codeVerifier');
    expectTypeOf(authorizationUrl({ ...options, pkce: Math.random() > 0.5 })).resolves.toHaveProperty('codeVerifier').toEqualTypeOf<
      string | undefined
    >();
    expectTypeOf(callbackParams('')).toEqualTypeOf<{ code: string; state: string | undefined }>();
  });

  it('start and poll a device authorization with the document\'s types', () => {
    expectTypeOf(startDeviceAuthorization({ baseUrl: '', clientId: '' })).resolves.toEqualTypeOf<components['schemas']['DeviceAuthorizationResponse']>();
    expectTypeOf(startDeviceAuthorization({ baseUrl: '', clientId: '', clientSecret: '', scope: ['read_user'] })).resolves.toHaveProperty('user_code').toEqualTypeOf<string>();
    expectTypeOf(pollDeviceToken({ baseUrl: '', clientId: '', deviceCode: '', interval: 5, expiresIn: 300, signal: AbortSignal.timeout(1) })).resolves.toEqualTypeOf<TokenResponse>();
    // @ts-expect-error the interval is required: the RFC's default of 5 seconds is the server's to state
    void pollDeviceToken({ baseUrl: '', clientId: '', deviceCode: '' });
    // @ts-expect-error a client is always named
    void startDeviceAuthorization({ baseUrl: '' });
    expectTypeOf<'access_denied' | 'expired_token' | 'slow_down' | 'authorization_pending'>().toExtend<OAuthError['error']>();
    void client.raw.POST('/oauth/token', { body: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: 'd', client_id: 'c' } });
  });

  it('require their credentials', () => {
    // @ts-expect-error clientSecret is required for the code exchange
    void exchangeCode({ baseUrl: '', clientId: '', code: '', redirectUri: '' });
    // @ts-expect-error only the two RFC 7009 hints
    void revoke({ baseUrl: '', token: '', clientId: '', clientSecret: '', tokenTypeHint: 'id_token' });
  });
});

describe('errors', () => {
  it('carry typed fields', () => {
    expectTypeOf<TokenbellApiError['status']>().toEqualTypeOf<number>();
    expectTypeOf<TokenbellApiError['response']>().toEqualTypeOf<Response>();
    expectTypeOf<TokenbellAuthenticationError['code']>().toEqualTypeOf<'authentication_error'>();
    expectTypeOf<TokenbellAuthenticationError>().toExtend<TokenbellApiError>();
    expectTypeOf<OAuthError['error']>().toEqualTypeOf<OAuthErrorCode>();
    expectTypeOf<'invalid_grant'>().toExtend<OAuthError['error']>();
    expectTypeOf<OAuthError['status']>().toEqualTypeOf<number | undefined>();
  });
});
