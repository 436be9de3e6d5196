// The requests oauth2-proxy's GitLab provider (providers/gitlab.go, on its OIDC provider) makes, as it makes them:
// discovery from the issuer, the code exchanged with client_secret_post, the id_token verified against the JWK set
// (go-oidc: RS256, issuer, audience, expiry, nonce), then userinfo with the access token as a bearer, from which it
// takes `email` (refusing the user when `email_verified` is not true), `nickname` and `groups` for --gitlab-group.
import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, approveAuthorization, signIn } from '../../packages/server/test/support/agent.js';
import { exampleOidcApplication } from '../../packages/server/test/support/example-seed.js';
import { seed, startTestServer, type TestServer } from '../../packages/server/test/support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

describe("oauth2-proxy's GitLab provider, as its requests go", () => {
  it('signs a member of acme in: verified address, groups for --gitlab-group', async () => {
    // --oidc-issuer-url is the GitLab URL; the provider discovers the rest.
    const discovery = await (await fetch(`${server.baseUrl}/.well-known/openid-configuration`)).json();
    expect(discovery.issuer).toBe(server.baseUrl);

    // Its default scope for GitLab: "openid email".
    const params = new URLSearchParams({
      client_id: exampleOidcApplication.clientId,
      redirect_uri: exampleOidcApplication.redirectUri,
      response_type: 'code',
      scope: 'openid email',
      state: 'oauth2-proxy-state',
      nonce: 'oauth2-proxy-nonce',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    const agent = new Agent(server.baseUrl);
    expect((await signIn(agent, seed.jsmith.username, seed.jsmith.password)).status).toBe(302);
    const approved = await approveAuthorization(agent, `${discovery.authorization_endpoint}?${params.toString().replace(/\+/g, '%20')}`);
    const callback = new URL(approved.headers.get('location')!);
    expect(callback.searchParams.get('state')).toBe('oauth2-proxy-state');

    const exchanged = await fetch(discovery.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        redirect_uri: exampleOidcApplication.redirectUri,
        client_id: exampleOidcApplication.clientId,
        client_secret: exampleOidcApplication.clientSecret,
        code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
      }),
    });
    expect(exchanged.status).toBe(200);
    const tokens = (await exchanged.json()) as { access_token: string; id_token: string; refresh_token: string; expires_in: number };

    const keys = createLocalJWKSet(await (await fetch(discovery.jwks_uri)).json());
    const { payload } = await jwtVerify(tokens.id_token, keys, { issuer: discovery.issuer, audience: exampleOidcApplication.clientId, algorithms: ['RS256'] });
    expect(payload.nonce).toBe('oauth2-proxy-nonce');

    const userinfo = await fetch(discovery.userinfo_endpoint, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(userinfo.status).toBe(200);
    const claims = (await userinfo.json()) as { email?: string; email_verified?: boolean; nickname: string; groups: string[] };
    // gitlab.go: "if !userInfo.EmailVerified && !p.AllowUnverifiedEmail { return error }".
    expect(claims.email_verified).toBe(true);
    expect(claims.email).toBe('jsmith@example.com');
    expect(claims.nickname).toBe('jsmith');
    // --gitlab-group acme lets her in; a group she is not in would not.
    expect(claims.groups).toContain('acme');
    expect(claims.groups).not.toContain('secret-team');
  });
});
