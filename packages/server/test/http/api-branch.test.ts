// API requests take their own branch of the app (bodies, authentication, validation, routes). Which requests take
// it, and in what order its steps answer, must be as when the API's steps were mounted on the app among the others.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Agent, signIn } from '../support/agent.js';
import { rawRequest } from '../hardening/support.js';
import { seed, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
const pat = { 'PRIVATE-TOKEN': seed.jsmith.pat };
const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string) => rawRequest(server.baseUrl, method, path, headers, body);

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe('the API branch', () => {
  it('is taken by /api/v3 in any case, as Express matches a mount path', async () => {
    for (const path of ['/api/v3/user', '/API/V3/user', '/Api/v3/user?', '/api/v4/user']) {
      const response = await send('GET', path, pat);
      expect({ path, status: response.status }).toEqual({ path, status: 200 });
      expect(JSON.parse(response.body).username).toBe('jsmith');
    }
  });

  it('authenticates /api/v3 itself and answers it as an undocumented path', async () => {
    expect((await send('GET', '/api/v3')).status).toBe(401);
    expect((await send('GET', '/api/v3', pat)).status).toBe(404);
    expect((await send('GET', '/api/v3/', pat)).status).toBe(404);
  });

  it('leaves paths that only start like the API to the rest of the app (no authentication)', async () => {
    const response = await send('GET', '/api/v3x/user');
    expect(response.status).toBe(404);
    expect(JSON.parse(response.body)).toEqual({ message: expect.any(String) });
  });

  it('reads a body on any method, so a broken one is refused before authentication and validation', async () => {
    const broken = await send('GET', '/api/v3/user', { 'content-type': 'application/json' }, '{"level":');
    expect(broken.status).toBe(400);
    const empty = await send('GET', '/api/v3/user', { ...pat, 'content-type': 'application/json' }, '');
    expect(empty.status).toBe(200);
  });

  it('checks the token before the parameters', async () => {
    expect((await send('PUT', '/api/v3/notification_settings?level=bogus')).status).toBe(401);
    expect((await send('PUT', '/api/v3/notification_settings?level=bogus', pat)).status).toBe(400);
    expect((await send('DELETE', '/api/v3/notification_settings')).status).toBe(401);
    const wrongMethod = await send('DELETE', '/api/v3/notification_settings', pat);
    expect(wrongMethod.status).toBe(405);
  });

  it('takes a form body as well as JSON on the API', async () => {
    const form = await send('PUT', '/api/v3/notification_settings', { ...pat, 'content-type': 'application/x-www-form-urlencoded' }, 'level=watch');
    expect(form.status).toBe(200);
    expect(JSON.parse(form.body).level).toBe('watch');
    const json = await send('PUT', '/api/v3/notification_settings', { ...pat, 'content-type': 'application/json' }, '{"level":"disabled"}');
    expect(json.status).toBe(200);
    expect(JSON.parse(json.body).level).toBe('disabled');
  });

  it('reads no session and sets no cookie, for a browser signed in to the pages too: success, refusal and error alike', async () => {
    const agent = new Agent(server.baseUrl);
    expect((await signIn(agent, 'jsmith', seed.jsmith.password)).status).toBe(302);
    expect(agent.cookies.size).toBeGreaterThan(0);
    const sessions = server.storage.sessions;
    const calls = (['find', 'save', 'refresh', 'remove', 'endAllOf'] as const).map((method) => vi.spyOn(sessions, method));
    try {
      const answers = [
        await agent.get('/api/v3/user', pat),
        await agent.get('/api/v3/user'),
        await agent.request('/api/v3/notification_settings', { method: 'PUT', headers: { ...pat, 'content-type': 'application/json' }, body: JSON.stringify({ level: 'loudest' }) }),
        await agent.get('/api/v3/no_such_thing', pat),
      ];
      expect(answers.map((answer) => answer.status)).toEqual([200, 401, 400, 404]);
      for (const answer of answers) expect(answer.headers.getSetCookie()).toEqual([]);
      for (const call of calls) expect(call).not.toHaveBeenCalled();
    } finally {
      for (const call of calls) call.mockRestore();
    }
  });
});
