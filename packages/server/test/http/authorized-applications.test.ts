// The applications page's "Authorized applications": tokens the password grant issued without a client are listed
// as "Password grant" and can be revoked there, like an application's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, csrfOf, signIn } from '../support/agent.js';
import { form, seed, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const passwordGrant = async (client: boolean) => {
  const response = await fetch(
    `${server.baseUrl}/oauth/token`,
    form({
      grant_type: 'password',
      username: 'jsmith',
      password: seed.jsmith.password,
      scope: 'read_user',
      ...(client ? { client_id: seed.client.id, client_secret: seed.client.secret } : {}),
    }),
  );
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
};
const works = async (token: string) => (await fetch(`${server.baseUrl}/api/v3/user`, { headers: { authorization: `Bearer ${token}` } })).status === 200;
const authorizedRows = (page: string) => [...(/<h2 id="authorized-applications">[\s\S]*?<\/section>/.exec(page)?.[0] ?? '').matchAll(/<th scope="row">([^<]*)/g)].map((m) => m[1]!);

describe('tokens of the password grant without a client', () => {
  it('are listed as "Password grant", and revoking them there ends them all but nothing else', async () => {
    const anonymous = [await passwordGrant(false), await passwordGrant(false)];
    const viaClient = await passwordGrant(true);
    const agent = new Agent(server.baseUrl);
    expect((await signIn(agent, 'jsmith', seed.jsmith.password)).status).toBe(302);
    const page = await (await agent.get('/profile/applications')).text();
    expect(authorizedRows(page)).toEqual(['Example App', 'Password grant']);
    expect(page).toContain('action="/profile/authorized_applications/password_grant/revoke"');

    const revoked = await agent.post('/profile/authorized_applications/password_grant/revoke', { _csrf: csrfOf(page) });
    expect(revoked.status).toBe(302);
    expect(revoked.headers.get('location')).toBe('/profile/applications');
    for (const token of anonymous) expect(await works(token)).toBe(false);
    expect(await works(viaClient)).toBe(true);

    const after = await (await agent.get('/profile/applications')).text();
    expect(authorizedRows(after)).toEqual(['Example App']);
    const again = await agent.post('/profile/authorized_applications/password_grant/revoke', { _csrf: csrfOf(after) });
    expect(again.status).toBe(404);
  });

  it('refuses the revoke form without the CSRF token, and revokes nothing', async () => {
    const token = await passwordGrant(false);
    const agent = new Agent(server.baseUrl);
    await signIn(agent, 'jsmith', seed.jsmith.password);
    const forged = await agent.post('/profile/authorized_applications/password_grant/revoke', { _csrf: 'forged' });
    expect(forged.status).toBe(403);
    expect(await works(token)).toBe(true);
  });
});
