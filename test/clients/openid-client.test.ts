// panva's openid-client, configured from the server's RFC 8414 metadata alone: the authorization code grant with
// PKCE and state (the user's part through the real sign-in and consent forms), refresh, introspection and
// revocation, each as the library checks them (issuer, token type, response shapes); and as OpenID Connect, as an
// app configured for gitlab.com uses it: discovery, nonce, the id_token's claims (and its signature, by jose),
// userinfo and refresh.
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, answerDeviceCode, approveAuthorization, signIn } from '../../packages/server/test/support/agent.js';
import { exampleOidcApplication } from '../../packages/server/test/support/example-seed.js';
import { seed, startTestServer, type TestServer } from '../../packages/server/test/support/server.js';
import { installedVersion } from './installed.js';
import { registerApplication } from '../../packages/server/src/domain/applications.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

/** The user's part of the flow, through the pages as a browser would: sign in, approve; answers the redirect. */
async function approve(authorizationUrl: URL): Promise<URL> {
  const agent = new Agent(server.baseUrl);
  expect((await signIn(agent, seed.jsmith.username, seed.jsmith.password)).status).toBe(302);
  const approved = await approveAuthorization(agent, authorizationUrl.href);
  expect(approved.status).toBe(302);
  return new URL(approved.headers.get('location')!);
}

describe(`openid-client ${installedVersion('openid-client')} (oauth4webapi ${installedVersion('oauth4webapi')})`, () => {
  it('discovers the server, runs the code flow with PKCE, refreshes, introspects and revokes', async () => {
    const config = await client.discovery(new URL(server.baseUrl), seed.client.id, seed.client.secret, undefined, {
      algorithm: 'oauth2',
      execute: [client.allowInsecureRequests],
    });
    expect(config.serverMetadata().issuer).toBe(server.baseUrl);

    const redirectUri = 'http://127.0.0.1:8080/callback';
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const authorizationUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'api read_user',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    const callback = await approve(authorizationUrl);
    expect(`${callback.origin}${callback.pathname}`).toBe(redirectUri);

    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.scope).toBe('api read_user');
    expect(tokens.refresh_token).toEqual(expect.any(String));
    const me = await client.fetchProtectedResource(config, tokens.access_token, new URL(`${server.baseUrl}/api/v4/user`), 'GET');
    expect(((await me.json()) as { username: string }).username).toBe('jsmith');

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);

    const active = await client.tokenIntrospection(config, refreshed.access_token);
    expect(active).toMatchObject({ active: true, client_id: seed.client.id, username: 'jsmith', scope: 'api read_user' });
    // Rotation: the first access token went with its refresh token.
    expect((await client.tokenIntrospection(config, tokens.access_token)).active).toBe(false);

    await client.tokenRevocation(config, refreshed.refresh_token!);
    expect((await client.tokenIntrospection(config, refreshed.access_token)).active).toBe(false);
    await expect(client.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});

describe(`openid-client ${installedVersion('openid-client')} as OpenID Connect, configured as for gitlab.com but the base URL`, () => {
  it('discovers, signs in with PKCE and a nonce, validates the id_token (and jose verifies it), reads userinfo and refreshes', async () => {
    // What an app's configuration for gitlab.com holds: the issuer, its application's credentials, `openid profile email`.
    const config = await client.discovery(new URL(server.baseUrl), exampleOidcApplication.clientId, exampleOidcApplication.clientSecret, undefined, {
      execute: [client.allowInsecureRequests],
    });
    const metadata = config.serverMetadata();
    expect(metadata.userinfo_endpoint).toBe(`${server.baseUrl}/oauth/userinfo`);

    const verifier = client.randomPKCECodeVerifier();
    const nonce = client.randomNonce();
    const state = client.randomState();
    const authorizationUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: exampleOidcApplication.redirectUri,
      scope: 'openid profile email',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      nonce,
      state,
    });
    const tokens = await client.authorizationCodeGrant(config, await approve(authorizationUrl), { pkceCodeVerifier: verifier, expectedNonce: nonce, expectedState: state });
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: server.baseUrl, aud: exampleOidcApplication.clientId, nonce, preferred_username: 'jsmith', email: 'jsmith@example.com', email_verified: true });

    // The signature, as a resource server checks it: jose against the published keys.
    const keys = createRemoteJWKSet(new URL(metadata.jwks_uri!));
    const { payload, protectedHeader } = await jwtVerify(tokens.id_token!, keys, { issuer: server.baseUrl, audience: exampleOidcApplication.clientId });
    expect(protectedHeader).toMatchObject({ alg: 'RS256', typ: 'JWT' });
    expect(payload.sub).toBe(claims.sub);

    const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(info).toMatchObject({ sub: claims.sub, nickname: 'jsmith', email: 'jsmith@example.com', groups: ['acme', 'opensource'] });

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    const again = refreshed.claims()!;
    expect(again).toMatchObject({ sub: claims.sub, aud: exampleOidcApplication.clientId, auth_time: claims.auth_time });
    expect(again.nonce).toBeUndefined();
    await jwtVerify(refreshed.id_token!, keys, { issuer: server.baseUrl, audience: exampleOidcApplication.clientId });
  });
});

describe(`openid-client ${installedVersion('openid-client')} as an app that allows members of some groups (Grafana's allowed_groups)`, () => {
  it("reads the groups claims, and /api/v4/groups with the same token answers the same groups", async () => {
    // Grafana's GitLab sign-in asks `openid email profile` and, to check allowed_groups by the API, `read_api`.
    const jsmith = await server.storage.users.byUsername('jsmith');
    const redirectUri = 'http://127.0.0.1:3000/login/gitlab';
    const app = await registerApplication(server.storage, jsmith!.id, { name: 'Grafana', redirect_uris: [redirectUri], scopes: ['openid', 'email', 'profile', 'read_api'] });
    const config = await client.discovery(new URL(server.baseUrl), app.record.uid, app.secret, undefined, { execute: [client.allowInsecureRequests] });
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const authorizationUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid email profile read_api',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    const tokens = await client.authorizationCodeGrant(config, await approve(authorizationUrl), { pkceCodeVerifier: verifier, expectedState: state });
    const claims = tokens.claims()!;
    const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);

    const response = await client.fetchProtectedResource(config, tokens.access_token, new URL(`${server.baseUrl}/api/v4/groups?min_access_level=10`), 'GET');
    expect(response.status).toBe(200);
    const listed = ((await response.json()) as { full_path: string }[]).map((g) => g.full_path);
    expect(listed).toEqual(['acme', 'opensource']);
    expect(info.groups).toEqual(listed);
    expect(claims.groups_direct).toEqual(listed);
  });
});

describe(`openid-client ${installedVersion('openid-client')} as a CLI: the device authorization grant`, () => {
  it('starts a device authorization, the user approves it on the pages, and the poll answers tokens with an id_token', { timeout: 30_000 }, async () => {
    const config = await client.discovery(new URL(server.baseUrl), exampleOidcApplication.clientId, exampleOidcApplication.clientSecret, undefined, {
      execute: [client.allowInsecureRequests],
    });
    expect(config.serverMetadata().device_authorization_endpoint).toBe(`${server.baseUrl}/oauth/authorize_device`);
    const device = await client.initiateDeviceAuthorization(config, { scope: 'openid email' });
    expect(device).toMatchObject({ user_code: expect.stringMatching(/^[0-9A-Z]{8}$/), verification_uri: `${server.baseUrl}/oauth/device`, interval: 5, expires_in: 300 });

    const agent = new Agent(server.baseUrl);
    expect((await signIn(agent, seed.jsmith.username, seed.jsmith.password)).status).toBe(302);
    expect((await answerDeviceCode(agent, device.user_code, 'approve')).status).toBe(200);

    // The library waits `interval` (5 s) before it polls, as RFC 8628 asks.
    const tokens = await client.pollDeviceAuthorizationGrant(config, device);
    expect(tokens.scope).toBe('openid email');
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: server.baseUrl, aud: exampleOidcApplication.clientId, preferred_username: 'jsmith', email: 'jsmith@example.com', auth_time: expect.any(Number) });
    expect(claims.nonce).toBeUndefined();
    await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!)), { issuer: server.baseUrl, audience: exampleOidcApplication.clientId });
    const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(info.preferred_username).toBe('jsmith');
  });

  it('ends the poll with access_denied when the user denies', { timeout: 30_000 }, async () => {
    const config = await client.discovery(new URL(server.baseUrl), exampleOidcApplication.clientId, exampleOidcApplication.clientSecret, undefined, {
      execute: [client.allowInsecureRequests],
    });
    const device = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    const agent = new Agent(server.baseUrl);
    expect((await signIn(agent, seed.jsmith.username, seed.jsmith.password)).status).toBe(302);
    expect((await answerDeviceCode(agent, device.user_code, 'deny')).status).toBe(200);
    await expect(client.pollDeviceAuthorizationGrant(config, device)).rejects.toMatchObject({ error: 'access_denied' });
  });
});
