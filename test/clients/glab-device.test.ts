// glab's device login (`glab auth login` on a self-managed instance), replayed as golang.org/x/oauth2's DeviceAuth
// sends it (glab is not packaged for Debian): a form POST to /oauth/authorize_device with its client id and its
// scopes `openid profile read_user write_repository api`, the user's approval (here the server's automatic approval),
// then the device_code grant polled at /oauth/token, and glab's first API call, GET /api/v4/user with the token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../packages/server/test/support/server.js';

const clientId = 'glab-device-client-000000000000000';
const adminToken = 'tbpat-root-glab-device-token-00000000000';
const glabScopes = 'openid profile read_user write_repository api';
const deviceGrant = 'urn:ietf:params:oauth:grant-type:device_code';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    testHelpers: true,
    seed: {
      users: [
        { username: 'jsmith', email: 'jsmith@example.com', name: 'Jane Smith', password: 'correct-horse-battery' },
        { username: 'root', email: 'root@example.com', name: 'Root', password: 'root-password-for-tests', is_admin: true, personal_access_tokens: [{ name: 'helpers', token: adminToken, scopes: ['api'] }] },
      ],
      // As glab's docs ask an administrator to register it: not confidential, its scopes, its loopback callback.
      applications: [{ name: 'GitLab CLI', owner: 'root', client_id: clientId, redirect_uris: ['http://localhost:7171/auth/redirect'], scopes: glabScopes.split(' '), confidential: false }],
    },
  });
});
afterAll(() => server?.close());

/** A form POST as golang.org/x/oauth2 makes it: form-encoded, asking for JSON. */
const post = (path: string, fields: Record<string, string>) =>
  fetch(`${server.baseUrl}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' }, body: new URLSearchParams(fields) });

describe("glab's device login, replayed", () => {
  it('gets a device code for its scopes, then tokens once the user approves, and reads the user', async () => {
    const approval = await fetch(`${server.baseUrl}/api/v3/test_helpers/auto_approval`, {
      method: 'PUT',
      headers: { 'PRIVATE-TOKEN': adminToken, 'Content-Type': 'application/json' },
      body: JSON.stringify({ username: 'jsmith' }),
    });
    expect(approval.status).toBe(200);

    const started = await post('/oauth/authorize_device', { client_id: clientId, scope: glabScopes });
    const device = await started.json();
    expect(started.status, JSON.stringify(device)).toBe(200);
    expect(device).toMatchObject({ device_code: expect.any(String), user_code: expect.any(String), verification_uri: `${server.baseUrl}/oauth/device`, interval: expect.any(Number) });

    const polled = await post('/oauth/token', { grant_type: deviceGrant, device_code: device.device_code, client_id: clientId });
    const tokens = await polled.json();
    expect(polled.status, JSON.stringify(tokens)).toBe(200);
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: glabScopes, refresh_token: expect.any(String), id_token: expect.any(String) });

    const user = await fetch(`${server.baseUrl}/api/v4/user`, { headers: { Authorization: `Bearer ${tokens.access_token}` } });
    expect(user.status).toBe(200);
    expect(await user.json()).toMatchObject({ username: 'jsmith' });
  });
});
