// The request journal's middleware (http/request-journal.ts) on a tiny application: what each request leaves in the
// journal, and that nothing secret does.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clientClosedStatus } from '../../src/http/request-journal.js';
import { type TestKitApp, application, basic, instant, issuedToken, settled, startTestKitApp } from '../support/test-kit-app.js';

let app: TestKitApp;
beforeEach(async () => {
  app = await startTestKitApp();
});
afterEach(() => app.close());

const at = new Date(instant * 1000).toISOString();

describe('requestJournal', () => {
  it('records the token endpoint: path without query, status, client from Basic, grant type, the user issued to; no secret', async () => {
    const secrets = ['query-access-token-SECRET', 'query-code-SECRET', 'query-state-SECRET', 'basic-client-SECRET', 'body-password-SECRET', 'body-code-SECRET'];
    const response = await fetch(`${app.baseUrl}/oauth/token?access_token=${secrets[0]}&code=${secrets[1]}&state=${secrets[2]}`, {
      method: 'POST',
      headers: { authorization: basic('my+app%21', secrets[3]!), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', username: 'jane', password: secrets[4]!, code: secrets[5]! }),
    });
    expect(response.status).toBe(200);
    const [entry] = await settled(app.journal, 1);
    expect(entry).toEqual({
      at,
      method: 'POST',
      path: '/oauth/token',
      status: 200,
      duration_ms: expect.any(Number),
      client_id: 'my app!',
      username: 'jane',
      grant_type: 'password',
      fault: null,
    });
    expect(entry!.duration_ms).toBeGreaterThanOrEqual(0);
    expect(entry!.duration_ms).toBe(Math.round(entry!.duration_ms * 10) / 10);
    const recorded = JSON.stringify(app.journal.list());
    for (const secret of [...secrets, issuedToken, 'SECRET', '?']) expect(recorded).not.toContain(secret);
  });

  it('takes the client from a client_id in the body or the query, and records a grant type only on the token endpoint', async () => {
    await fetch(`${app.baseUrl}/oauth/revoke`, { method: 'POST', body: new URLSearchParams({ client_id: 'from-body', token: 'tba_x', grant_type: 'password' }) });
    await fetch(`${app.baseUrl}/users/sign_in?client_id=from-query`);
    const entries = await settled(app.journal, 2);
    expect(entries.map((e) => [e.path, e.client_id, e.grant_type, e.username])).toEqual([
      ['/users/sign_in', 'from-query', null, null],
      ['/oauth/revoke', 'from-body', null, null],
    ]);
  });

  it('records an API call with the application of its token and its user, by the path as called (v4 or v3)', async () => {
    await fetch(`${app.baseUrl}/api/v4/user?access_token=${issuedToken}`);
    await fetch(`${app.baseUrl}/api/v3/user`, { headers: { 'private-token': 'tbpat-SECRET' } });
    const entries = await settled(app.journal, 2);
    expect(entries.map((e) => [e.method, e.path, e.status, e.client_id, e.username])).toEqual([
      ['GET', '/api/v3/user', 200, null, 'jane'],
      ['GET', '/api/v4/user', 200, application.uid, 'jane'],
    ]);
    expect(app.journal.list({ path: '/api/v3/user' })).toHaveLength(2);
    expect(app.journal.list({ client_id: application.uid })).toHaveLength(1);
    expect(JSON.stringify(entries)).not.toContain('SECRET');
    expect(JSON.stringify(entries)).not.toContain(issuedToken);
  });

  it('records failures with their status, and a request whose lookups fail with those fields null', async () => {
    await fetch(`${app.baseUrl}/no/such/page`);
    app.breakStorage();
    const response = await fetch(`${app.baseUrl}/api/v3/user`);
    expect(response.status).toBe(200);
    const entries = await settled(app.journal, 2);
    expect(entries.map((e) => [e.path, e.status, e.client_id, e.username])).toEqual([
      ['/api/v3/user', 200, null, 'jane'],
      ['/no/such/page', 404, null, null],
    ]);
  });

  it('leaves out the test-helper area, in any case and under /api/v4 too', async () => {
    for (const path of ['/api/v3/test_helpers/requests', '/api/v4/test_helpers/requests', '/API/V4/Test_Helpers/requests']) {
      expect((await fetch(`${app.baseUrl}${path}`)).status).toBe(200);
    }
    await fetch(`${app.baseUrl}/api/v3/test_helpersx`);
    expect((await settled(app.journal, 1)).map((e) => e.path)).toEqual(['/api/v3/test_helpersx']);
  });

  it(`records a request whose client went away before the answer as ${clientClosedStatus}`, async () => {
    const abort = new AbortController();
    const pending = fetch(`${app.baseUrl}/api/v3/slow`, { signal: abort.signal });
    setTimeout(() => abort.abort(), 100);
    await expect(pending).rejects.toThrow();
    const [entry] = await settled(app.journal, 1);
    expect(entry).toMatchObject({ path: '/api/v3/slow', status: clientClosedStatus });
  });
});
