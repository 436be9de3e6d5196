// glab's device login (`glab auth login` choosing the web/device flow on a self-managed instance), replayed over real
// HTTP: glab is not installed here and its source (gitlab.com/gitlab-org/cli) is not available to this repository's
// tooling, so the requests are those of golang.org/x/oauth2's DeviceAuth and DeviceAccessToken, which glab's device
// flow is built on: a form POST of client_id and glab's scopes to /oauth/authorize_device, then token polls with the
// device_code grant, first with the client id in HTTP Basic (x/oauth2's auto-detected style tries the header first)
// and, on invalid_client, in the body; then the API with the bearer token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestServer, type TestServer } from '../../packages/server/test/support/server.js';

const rootPat = 'tbpat-root-glab-device-token-000000000000000000';
const clientId = 'glab-public-client-id-000000000000000000000000';
// glab's scopes, as it asks for them.
const glabScopes = 'openid profile read_user write_repository api';
const deviceGrant = 'urn:ietf:params:oauth:grant-type:device_code';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    testHelpers: true,
    seed: {
      users: [
        { username: 'root', email: 'root@example.com', name: 'Administrator', password: 'administrator-password', is_admin: true, personal_access_tokens: [{ name: 'kit', token: rootPat, scopes: ['api'] }] },
        { username: 'jsmith', email: 'jsmith@example.com', name: 'Jane Smith', password: 'correct-horse-battery' },
      ],
      // As GitLab's docs register glab on a self-managed instance: not confidential, glab's scopes, its redirect.
      applications: [{ name: 'glab', owner: 'root', client_id: clientId, confidential: false, redirect_uris: ['http://localhost:7171/auth/redirect'], scopes: glabScopes.split(' ') }],
    },
  });
});
afterAll(() => server?.close());

const formPost = (path: string, params: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${server.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...headers },
    body: new URLSearchParams(params),
  });

/** One poll as x/oauth2 sends it: Basic with the client id and an empty secret, then the id in the body. */
async function poll(deviceCode: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:`).toString('base64')}`;
  let response = await formPost('/oauth/token', { grant_type: deviceGrant, device_code: deviceCode }, { authorization: basic });
  let body = (await response.json()) as Record<string, unknown>;
  if (body.error === 'invalid_client') {
    response = await formPost('/oauth/token', { grant_type: deviceGrant, device_code: deviceCode, client_id: clientId });
    body = (await response.json()) as Record<string, unknown>;
  }
  return { status: response.status, body };
}

describe("glab's device login, replayed", () => {
  it('asks with its scopes, is approved, polls its token and reads /api/v4/user', async () => {
    const start = await formPost('/oauth/authorize_device', { client_id: clientId, scope: glabScopes });
    expect(start.status).toBe(200);
    const device = (await start.json()) as { device_code: string; user_code: string; verification_uri: string; interval: number };
    expect(device).toMatchObject({ device_code: expect.any(String), user_code: expect.any(String), verification_uri: expect.stringContaining('/oauth/device') });

    expect((await poll(device.device_code)).body).toMatchObject({ error: 'authorization_pending' });
    const approve = await fetch(`${server.baseUrl}/api/v4/test_helpers/device_authorizations`, {
      ...json('POST', { user_code: device.user_code, username: 'jsmith', decision: 'approve' }),
      headers: { 'PRIVATE-TOKEN': rootPat, 'content-type': 'application/json' },
    });
    expect(approve.status).toBe(201);

    // glab waits `interval` seconds between polls; the server may ask it to slow down if it polls sooner.
    await new Promise((resolve) => setTimeout(resolve, device.interval * 1000));
    const granted = await poll(device.device_code);
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);
    expect(granted.body).toMatchObject({ token_type: 'bearer', access_token: expect.any(String), refresh_token: expect.any(String), id_token: expect.any(String) });
    expect(String(granted.body.scope).split(' ').sort()).toEqual(glabScopes.split(' ').sort());

    const user = await fetch(`${server.baseUrl}/api/v4/user`, { headers: { authorization: `Bearer ${granted.body.access_token as string}` } });
    expect(user.status).toBe(200);
    expect(await user.json()).toMatchObject({ username: 'jsmith' });
  }, 30_000);
});
