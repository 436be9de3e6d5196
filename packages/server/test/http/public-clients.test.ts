// Public clients (RFC 6749 section 2.1): registered on the applications page as not confidential, they have no App
// Secret, must use PKCE, and identify themselves by client_id alone at the token and revocation endpoints, and
// nowhere else.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSeed } from '../../src/domain/seed/load.js';
import { Agent, consentFields, csrfOf, signIn } from '../support/agent.js';
import { form, seed, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let agent: Agent;
let clientId: string;
const redirectUri = 'http://127.0.0.1/spa/callback';

beforeAll(async () => {
  server = await startTestServer();
  agent = new Agent(server.baseUrl);
  expect((await signIn(agent, seed.jsmith.username, seed.jsmith.password)).status).toBe(302);
});
afterAll(() => server.close());


/** Runs the authorization request in the signed-in session and approves it; answers the redirect's URL. */
async function authorize(params: Record<string, string>): Promise<URL> {
  const query = new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope: 'api', ...params });
  const consent = await agent.get(`/oauth/authorize?${query.toString().replace(/\+/g, '%20')}`);
  if (consent.status === 302) return new URL(consent.headers.get('location')!);
  const approved = await agent.post('/oauth/authorize', { ...consentFields(await consent.text()), decision: 'approve' });
  return new URL(approved.headers.get('location')!);
}

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

const token = (params: Record<string, string>, headers: Record<string, string> = {}) => {
  const init = form(params);
  return fetch(`${server.baseUrl}/oauth/token`, { ...init, headers: { ...init.headers, ...headers } });
};

describe('a public client', () => {
  it('is registered without an App Secret', async () => {
    const page = await (await agent.get('/profile/applications')).text();
    expect(page).toContain('name="confidential" value="false"');
    const created = await agent.post('/profile/applications', { _csrf: csrfOf(page), name: 'Browser App', redirect_uri: redirectUri, scopes: 'api', confidential: 'false' });
    expect(created.status).toBe(201);
    const text = await created.text();
    expect(text).toContain('This is a public client: it has no App Secret.');
    expect(text).not.toContain('id="app-secret"');
    clientId = /id="app-id" type="text" readonly value="([^"]+)"/.exec(text)![1]!;
    expect(await server.storage.applications.byUid(clientId)).toMatchObject({ confidential: false, secret_digest: null });
  });

  it('gets no code without a PKCE challenge', async () => {
    const location = await authorize({ state: 'no-pkce' });
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/public client.*PKCE/);
    expect(location.searchParams.get('code')).toBeNull();
  });

  it('exchanges, refreshes and revokes with its client_id alone', async () => {
    const { verifier, challenge } = pkce();
    const code = (await authorize({ code_challenge: challenge, code_challenge_method: 'S256' })).searchParams.get('code')!;
    const exchanged = await token({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier });
    expect(exchanged.status).toBe(200);
    const tokens = (await exchanged.json()) as { access_token: string; refresh_token: string };

    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: clientId });
    expect(refreshed.status).toBe(200);
    const next = (await refreshed.json()) as { access_token: string; refresh_token: string };

    const revoked = await fetch(`${server.baseUrl}/oauth/revoke`, form({ token: next.refresh_token, client_id: clientId }));
    expect(revoked.status).toBe(200);
    const me = await fetch(`${server.baseUrl}/api/v3/user`, { headers: { authorization: `Bearer ${next.access_token}` } });
    expect(me.status).toBe(401);
  });

  it("cannot tell another client's live token from a made-up one at revocation, nor revoke it", async () => {
    // A client_id alone proves nothing: anyone may send a public client's, so it must learn no more than no client.
    const issued = await token({ grant_type: 'password', username: seed.jsmith.username, password: seed.jsmith.password, client_id: seed.client.id, client_secret: seed.client.secret });
    expect(issued.status).toBe(200);
    const { access_token } = (await issued.json()) as { access_token: string };
    const answers = [];
    for (const candidate of [access_token, 'tbat_made-up-token-0000000000000000000000']) {
      const response = await fetch(`${server.baseUrl}/oauth/revoke`, form({ token: candidate, client_id: clientId }));
      answers.push({ status: response.status, body: await response.text() });
    }
    expect(answers[0]).toEqual({ status: 200, body: '{}' });
    expect(answers[1]).toEqual(answers[0]);
    const me = await fetch(`${server.baseUrl}/api/v3/user`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(me.status).toBe(200);
  });

  it('is refused with any secret, at introspection, and with the password grant', async () => {
    const { verifier, challenge } = pkce();
    const code = (await authorize({ code_challenge: challenge, code_challenge_method: 'S256' })).searchParams.get('code')!;
    const withSecret = await token({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId, client_secret: 'tbcs_guessed-secret-000000', code_verifier: verifier });
    expect(withSecret.status).toBe(401);
    expect(((await withSecret.json()) as { error: string }).error).toBe('invalid_client');
    const basicEmpty = await token({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier }, { authorization: `Basic ${Buffer.from(`${clientId}:x`).toString('base64')}` });
    expect(basicEmpty.status).toBe(401);

    const introspect = await fetch(`${server.baseUrl}/oauth/introspect`, form({ token: 'anything', client_id: clientId }));
    expect(introspect.status).toBe(401);
    const password = await token({ grant_type: 'password', username: 'jsmith', password: seed.jsmith.password, client_id: clientId });
    expect(password.status).toBe(401);
    expect(((await password.json()) as { error: string }).error).toBe('invalid_client');
  });

  it('is announced in the metadata as the "none" authentication method where it applies', async () => {
    const metadata = (await (await fetch(`${server.baseUrl}/.well-known/oauth-authorization-server`)).json()) as Record<string, string[]>;
    expect(metadata.token_endpoint_auth_methods_supported).toContain('none');
    expect(metadata.revocation_endpoint_auth_methods_supported).toContain('none');
    expect(metadata.introspection_endpoint_auth_methods_supported).not.toContain('none');
  });
});

describe('a confidential client', () => {
  it('still needs its secret: client_id alone is invalid_client', async () => {
    const response = await token({ grant_type: 'refresh_token', refresh_token: 'whatever', client_id: seed.client.id });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_client');
  });
});

describe('public clients in a seed', () => {
  it('load without a client_secret, and a secret for one is refused naming the field', async () => {
    const owner = 'jsmith';
    await loadSeed(server.storage, { applications: [{ name: 'Seeded SPA', owner, client_id: 'seeded-spa', redirect_uris: [redirectUri], confidential: false }] });
    expect(await server.storage.applications.byUid('seeded-spa')).toMatchObject({ confidential: false, secret_digest: null });
    await expect(
      loadSeed(server.storage, { applications: [{ name: 'Bad', owner, client_id: 'bad-spa', client_secret: 'tbcs_0123456789abcdef', redirect_uris: [redirectUri], confidential: false }] }),
    ).rejects.toThrow(/applications\[0\]\.client_secret: must be absent: a public application has no secret/);
  });
});
