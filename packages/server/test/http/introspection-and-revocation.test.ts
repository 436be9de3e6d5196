// RFC 7662 section 4 and RFC 7009 section 2.1 over real HTTP: a client introspects only the tokens issued to it
// (unless the instance names it a resource server), and an unauthenticated caller of the revocation endpoint learns
// nothing about tokens issued to clients.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerApplication } from '../../src/domain/applications.js';
import { approveAuthorization, checkAuthorizationRequest } from '../../src/domain/oauth/authorization.js';
import { form, seed, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let resourceServer: TestServer;
const other = { uid: 'other-client-id-000000000000000000', secret: 'tbcs_other-client-secret-00000000000000000' };
const resource = { uid: 'resource-server-id-0000000000000000', secret: 'tbcs_resource-server-secret-000000000000000' };

async function withClients(s: TestServer) {
  const jsmith = (await s.storage.users.byUsername('jsmith'))!;
  for (const c of [other, resource]) {
    await registerApplication(s.storage, jsmith.id, { name: c.uid, redirect_uris: ['https://other.example/cb'], uid: c.uid, secret: c.secret });
  }
}

beforeAll(async () => {
  server = await startTestServer();
  resourceServer = await startTestServer({ introspectionClients: [resource.uid] });
  await withClients(server);
  await withClients(resourceServer);
});
afterAll(async () => {
  await server.close();
  await resourceServer.close();
});

const post = (s: TestServer, path: string, params: Record<string, string>) => fetch(s.baseUrl + path, form(params));
const exampleClient = { client_id: seed.client.id, client_secret: seed.client.secret };

/** A token pair of Example App for jsmith, through a code approved the way the consent page does. */
async function exampleAppTokens(s: TestServer): Promise<{ access_token: string; refresh_token: string }> {
  const checked = await checkAuthorizationRequest(s.storage, { client_id: seed.client.id, redirect_uri: seed.redirectUri, response_type: 'code' });
  if (checked.outcome !== 'valid') throw new Error('authorization request refused');
  const jsmith = (await s.storage.users.byUsername('jsmith'))!;
  const code = new URL(await approveAuthorization(s.storage, jsmith.id, checked.request, { now: s.now(), codeTtl: 600, authTime: s.now() })).searchParams.get('code')!;
  const response = await post(s, '/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: seed.redirectUri, ...exampleClient });
  return response.json();
}

async function anonymousPasswordToken(s: TestServer): Promise<string> {
  const response = await post(s, '/oauth/token', { grant_type: 'password', username: 'jsmith', password: seed.jsmith.password });
  return (await response.json()).access_token;
}

const works = async (s: TestServer, token: string) => (await fetch(`${s.baseUrl}/api/v3/user`, { headers: { authorization: `Bearer ${token}` } })).status === 200;

describe('introspection (RFC 7662 section 4)', () => {
  it('describes a client its own tokens, and shows it every other token as inactive', async () => {
    const tokens = await exampleAppTokens(server);
    const own = await (await post(server, '/oauth/introspect', { token: tokens.access_token, ...exampleClient })).json();
    expect(own).toMatchObject({ active: true, client_id: seed.client.id });

    for (const token of [tokens.access_token, tokens.refresh_token]) {
      const answer = await post(server, '/oauth/introspect', { token, client_id: other.uid, client_secret: other.secret });
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual({ active: false });
    }
    const anonymous = await anonymousPasswordToken(server);
    expect(await (await post(server, '/oauth/introspect', { token: anonymous, ...exampleClient })).json()).toEqual({ active: false });
  });

  it('describes every token to a client named in --introspection-clients, and only to it', async () => {
    const tokens = await exampleAppTokens(resourceServer);
    const anonymous = await anonymousPasswordToken(resourceServer);
    const asResource = { client_id: resource.uid, client_secret: resource.secret };
    expect(await (await post(resourceServer, '/oauth/introspect', { token: tokens.access_token, ...asResource })).json()).toMatchObject({
      active: true,
      client_id: seed.client.id,
      username: 'jsmith',
    });
    expect(await (await post(resourceServer, '/oauth/introspect', { token: anonymous, ...asResource })).json()).toMatchObject({ active: true, client_id: null });
    const asOther = { client_id: other.uid, client_secret: other.secret };
    expect(await (await post(resourceServer, '/oauth/introspect', { token: tokens.access_token, ...asOther })).json()).toEqual({ active: false });
  });
});

describe('revocation without client authentication (RFC 7009 section 2.1)', () => {
  it('answers a live token of a client exactly as a made-up one, and revokes neither', async () => {
    const tokens = await exampleAppTokens(server);
    const answers = [];
    for (const token of [tokens.refresh_token, tokens.access_token, 'tbr_made-up-0000000000000000000000000000000']) {
      for (const hint of [{}, { token_type_hint: 'refresh_token' }] as Array<Record<string, string>>) {
        const response = await post(server, '/oauth/revoke', { token, ...hint });
        answers.push({ status: response.status, body: await response.text(), challenge: response.headers.get('www-authenticate') });
      }
    }
    expect(answers[0]).toEqual({ status: 200, body: '{}', challenge: null });
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(await works(server, tokens.access_token)).toBe(true);
    const refreshed = await post(server, '/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...exampleClient });
    expect(refreshed.status).toBe(200);
  });

  it('revokes a token of the anonymous password grant for whoever presents it', async () => {
    const token = await anonymousPasswordToken(server);
    const response = await post(server, '/oauth/revoke', { token });
    expect(response.status).toBe(200);
    expect(await works(server, token)).toBe(false);
    // Answered as a made-up string is, so the answer tells nothing of whether the token was live.
    const madeUp = await post(server, '/oauth/revoke', { token: 'tba_made-up-0000000000000000000000000000000' });
    expect({ status: madeUp.status, body: await madeUp.text() }).toEqual({ status: response.status, body: await response.text() });
  });

  it('still lets the client revoke its own token, and answers 200 for unknown ones', async () => {
    const tokens = await exampleAppTokens(server);
    expect((await post(server, '/oauth/revoke', { token: tokens.refresh_token, ...exampleClient })).status).toBe(200);
    expect(await works(server, tokens.access_token)).toBe(false);
    expect((await post(server, '/oauth/revoke', { token: 'tba_unknown', ...exampleClient })).status).toBe(200);
  });
});
