// --password-grant: the operator decides who may use the password grant (any: the spec; clients; off), and the
// token endpoint, its errors and the server metadata all say the same.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, signIn } from '../support/agent.js';
import { form, seed, startTestServer, type TestServer } from '../support/server.js';

/** Not the password grant's: served whatever the setting. */
const deviceGrant = 'urn:ietf:params:oauth:grant-type:device_code';
const servers: Partial<Record<'any' | 'clients' | 'off', TestServer>> = {};
beforeAll(async () => {
  for (const setting of ['any', 'clients', 'off'] as const) servers[setting] = await startTestServer({ passwordGrant: setting });
});
afterAll(() => Promise.all(Object.values(servers).map((s) => s.close())));

const grant = (setting: 'any' | 'clients' | 'off', client: boolean) =>
  fetch(
    `${servers[setting]!.baseUrl}/oauth/token`,
    form({
      grant_type: 'password',
      username: 'jsmith',
      password: seed.jsmith.password,
      ...(client ? { client_id: seed.client.id, client_secret: seed.client.secret } : {}),
    }),
  );
const grantTypesOf = async (setting: 'any' | 'clients' | 'off') =>
  ((await (await fetch(`${servers[setting]!.baseUrl}/.well-known/oauth-authorization-server`)).json()) as { grant_types_supported: string[] }).grant_types_supported;

describe('--password-grant any (the default, as the spec has it)', () => {
  it('issues tokens with or without client credentials', async () => {
    expect((await grant('any', false)).status).toBe(200);
    expect((await grant('any', true)).status).toBe(200);
    expect(await grantTypesOf('any')).toEqual(['authorization_code', 'password', 'refresh_token', deviceGrant]);
  });
});

describe('--password-grant clients', () => {
  it('refuses an anonymous client with 401 invalid_client, and serves an authenticated one', async () => {
    const anonymous = await grant('clients', false);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('cache-control')).toBe('no-store');
    expect(await anonymous.json()).toMatchObject({ error: 'invalid_client' });
    expect((await grant('clients', true)).status).toBe(200);
    expect(await grantTypesOf('clients')).toContain('password');
  });
});

describe('--password-grant off', () => {
  it('answers unsupported_grant_type naming the grants it serves, with or without a client, and lists no password grant', async () => {
    for (const client of [false, true]) {
      const refused = await grant('off', client);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({
        error: 'unsupported_grant_type',
        error_description: `The grant type "password" is not supported; use one of authorization_code, refresh_token, ${deviceGrant}.`,
      });
    }
    expect(await grantTypesOf('off')).toEqual(['authorization_code', 'refresh_token', deviceGrant]);
  });

  it('names only the grants it serves for a grant type the document does not know either', async () => {
    const response = await fetch(`${servers.off!.baseUrl}/oauth/token`, form({ grant_type: 'client_credentials' }));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'unsupported_grant_type', error_description: expect.stringContaining(`use one of authorization_code, refresh_token, ${deviceGrant}.`) });
  });

  it('still lets people sign in to the pages', async () => {
    expect((await signIn(new Agent(servers.off!.baseUrl), 'jsmith', seed.jsmith.password)).status).toBe(302);
  });
});
