import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notificationEvents, notificationLevels } from '../../src/openapi/document.js';
import { form, json, seed, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let jsmithToken: string;
let malloryToken: string;

async function passwordToken(username: string, password: string, scope?: string): Promise<string> {
  const response = await fetch(`${server.baseUrl}/oauth/token`, form({ grant_type: 'password', username, password, ...(scope ? { scope } : {}) }));
  if (response.status !== 200) throw new Error(`password grant for ${username}: ${response.status} ${await response.text()}`);
  return (await response.json()).access_token;
}

beforeAll(async () => {
  server = await startTestServer();
  jsmithToken = await passwordToken('jsmith', seed.jsmith.password);
  malloryToken = await passwordToken('mallory', 'not-a-member-of-anything');
});
afterAll(() => server.close());

const api = (path: string, init: RequestInit & { token?: string } = {}) => {
  const { token = jsmithToken, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (token) headers.set('authorization', `Bearer ${token}`);
  return fetch(`${server.baseUrl}/api/v3${path}`, { ...rest, headers });
};
/** Every stored notification setting, to show that a refused request changed none. */
const storedSettings = async () =>
  JSON.stringify(
    server.kind === 'file'
      ? server.store.data.notification_settings
      : await server.sql('SELECT row_to_json(s) AS setting FROM notification_settings s ORDER BY row_to_json(s)::text'),
  );

describe('authentication (spec 5)', () => {
  it('accepts an OAuth token in the Authorization header', async () => {
    const response = await api('/user');
    expect(response.status).toBe(200);
    expect((await response.json()).username).toBe('jsmith');
  });

  it('accepts an OAuth token in the access_token query parameter', async () => {
    const response = await fetch(`${server.baseUrl}/api/v3/user?access_token=${jsmithToken}`);
    expect(response.status).toBe(200);
  });

  it('accepts a personal access token in PRIVATE-TOKEN', async () => {
    const response = await fetch(`${server.baseUrl}/api/v3/notification_settings`, { headers: { 'PRIVATE-TOKEN': seed.jsmith.pat } });
    expect(response.status).toBe(200);
    expect((await response.json()).notification_email).toBe('jsmith@example.com');
  });

  it('answers 401 with a Bearer challenge when no token is sent', async () => {
    const response = await api('/notification_settings', { token: '' });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ message: '401 Unauthorized' });
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="tokenbell"');
  });

  it.each([
    ['an unknown bearer token', { authorization: 'Bearer tba_unknown' }],
    ['an unknown private token', { 'PRIVATE-TOKEN': 'tbpat-unknown' }],
    ['a malformed Authorization header', { authorization: 'Bearer' }],
  ])('answers 401 invalid_token for %s', async (_label, headers) => {
    const response = await fetch(`${server.baseUrl}/api/v3/user`, { headers });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ message: '401 Unauthorized' });
    expect(response.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  it('answers 401 before looking at parameters', async () => {
    const response = await api('/notification_settings?level=loud', { method: 'PUT', token: '' });
    expect(response.status).toBe(401);
  });

  it('refuses an expired token', async () => {
    const token = await passwordToken('jsmith', seed.jsmith.password);
    server.advance(7201);
    try {
      expect((await api('/user', { token })).status).toBe(401);
    } finally {
      server.advance(-7201);
    }
  });

  it('refuses a revoked token', async () => {
    const token = await passwordToken('jsmith', seed.jsmith.password);
    await fetch(`${server.baseUrl}/oauth/revoke`, form({ token }));
    expect((await api('/user', { token })).status).toBe(401);
  });

  it('answers 403 when the token lacks the scope', async () => {
    const token = await passwordToken('jsmith', seed.jsmith.password, 'read_user');
    expect((await api('/user', { token })).status).toBe(200);
    const response = await api('/notification_settings', { token });
    expect(response.status).toBe(403);
    expect((await response.json()).message).toMatch(/read_api/);
    expect(response.headers.get('www-authenticate')).toMatch(/insufficient_scope/);
  });

  it.each(['read_repository', 'write_repository read_registry', 'openid profile email', 'ai_features k8s_proxy'])(
    'reads nothing of the API with %s, as the service answers a token without an API scope',
    async (scope) => {
      const token = await passwordToken('jsmith', seed.jsmith.password, scope);
      for (const path of ['/user', '/notification_settings', '/groups/acme', '/projects/acme%2Fwidgets']) {
        const response = await fetch(`${server.baseUrl}/api/v4${path}`, { headers: { authorization: `Bearer ${token}` } });
        expect(response.status, path).toBe(403);
        expect(response.headers.get('www-authenticate'), path).toMatch(/error="insufficient_scope"/);
      }
      // The token itself is good: its owner may read what it carries.
      const info = await (await fetch(`${server.baseUrl}/oauth/token/info`, { headers: { authorization: `Bearer ${token}` } })).json();
      expect(info.scope).toEqual(scope.split(' '));
    },
  );

  it('acts only for the user who authorized the token', async () => {
    await api('/notification_settings?level=watch', { method: 'PUT', token: malloryToken });
    const mine = await (await api('/notification_settings')).json();
    const theirs = await (await api('/notification_settings', { token: malloryToken })).json();
    expect(theirs.level).toBe('watch');
    expect(mine.notification_email).toBe('jsmith@example.com');
    expect(theirs.notification_email).not.toBe(mine.notification_email);
  });
});

describe('GET /user (spec 4.3)', () => {
  it('shows the account and nothing secret', async () => {
    const user = await (await api('/user')).json();
    expect(user).toMatchObject({ username: 'jsmith', email: 'jsmith@example.com', state: 'active', two_factor_enabled: false });
    expect(JSON.stringify(user)).not.toMatch(/scrypt|password|token/i);
  });
  it('answers under /api/v4 too', async () => {
    const response = await fetch(`${server.baseUrl}/api/v4/user`, { headers: { authorization: `Bearer ${jsmithToken}` } });
    expect(response.status).toBe(200);
    expect((await response.json()).username).toBe('jsmith');
  });
});

describe('global notification settings (spec 4.4)', () => {
  it('starts at participating with the account e-mail', async () => {
    // awong has two-factor authentication, so a personal access token is the way in (spec 5.4).
    const response = await fetch(`${server.baseUrl}/api/v3/notification_settings`, { headers: { 'PRIVATE-TOKEN': seed.awong.pat } });
    expect(await response.json()).toEqual({ level: 'participating', notification_email: 'awong@example.com' });
  });

  it('changes level, e-mail and events, and answers the updated object', async () => {
    const response = await api('/notification_settings', json('PUT', { level: 'custom', notification_email: 'js@work.example.com', new_note: true }));
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({ level: 'custom', notification_email: 'js@work.example.com' });
    expect(body.events.new_note).toBe(true);
    expect(body.events.new_issue).toBe(false);
    const again = await (await api('/notification_settings')).json();
    expect(again).toEqual(body);
  });

  it.each(['disabled', 'participating', 'watch', 'mention'])('accepts level %s and shows no events', async (level) => {
    const body = await (await api(`/notification_settings?level=${level}`, { method: 'PUT' })).json();
    expect(body).toEqual({ level, notification_email: 'js@work.example.com' });
  });

  it('refuses an invalid notification_email, naming it, and stores nothing', async () => {
    const before = await storedSettings();
    const response = await api('/notification_settings', json('PUT', { notification_email: 'not-an-address', level: 'watch' }));
    expect(response.status).toBe(400);
    expect((await response.json()).message).toMatch(/notification_email/);
    expect(await storedSettings()).toBe(before);
  });

  // jsmith owns jsmith@example.com and, as a secondary address, js@work.example.com (fixtures/example-seed.json).
  it('takes as notification e-mail the primary address, or a secondary one in another case, stored as sent', async () => {
    const primary = await api('/notification_settings', json('PUT', { notification_email: 'jsmith@example.com' }));
    expect(primary.status).toBe(200);
    expect((await primary.json()).notification_email).toBe('jsmith@example.com');
    const secondary = await api('/notification_settings?notification_email=JS%40Work.Example.com', { method: 'PUT' });
    expect(secondary.status).toBe(200);
    expect((await secondary.json()).notification_email).toBe('JS@Work.Example.com');
    expect((await (await api('/notification_settings')).json()).notification_email).toBe('JS@Work.Example.com');
  });

  it.each([
    ["another user's address", 'Mallory@Example.com'],
    ['an address no user has', 'jsmith@elsewhere.example'],
  ])('refuses as notification e-mail %s (400, "is not an email you own"), and changes nothing', async (_label, address) => {
    const before = await (await api('/notification_settings')).json();
    const stored = await storedSettings();
    const response = await api('/notification_settings', json('PUT', { level: before.level === 'watch' ? 'mention' : 'watch', notification_email: address }));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ message: '400 Bad request - notification_email is not an email you own' });
    expect(await (await api('/notification_settings')).json()).toEqual(before);
    expect(await storedSettings()).toBe(stored);
  });

  it('refuses level global for the global setting', async () => {
    const response = await api('/notification_settings?level=global', { method: 'PUT' });
    expect(response.status).toBe(400);
    expect((await response.json()).message).toMatch(/level/);
  });
});

describe.each([
  { type: 'groups', id: 'acme', numeric: async () => (await server.storage.namespaces.groupByPath('acme'))!.id, notFound: '404 Group Not Found', publicId: 'opensource' },
  { type: 'projects', id: 'acme%2Fwidgets', numeric: async () => (await server.storage.namespaces.projectByFullPath('acme/widgets'))!.id, notFound: '404 Project Not Found', publicId: 'opensource%2Fbell' },
])('$type notification settings (spec 4.5)', ({ type, id, numeric, notFound, publicId }) => {
  const path = (ref: string | number) => `/${type}/${ref}/notification_settings`;

  it('answers {"level":"global"} where no choice was made', async () => {
    expect(await (await api(path(id))).json()).toEqual({ level: 'global' });
  });

  it.each(notificationLevels.filter((l) => l !== 'custom'))('sets level %s and answers the level only', async (level) => {
    const response = await api(path(id), json('PUT', { level }));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ level });
  });

  it('answers all twelve events for custom, unset ones false', async () => {
    const body = await (await api(path(id), json('PUT', { level: 'custom', new_merge_request: true }))).json();
    expect(body.level).toBe('custom');
    expect(Object.keys(body.events).sort()).toEqual([...notificationEvents].sort());
    for (const event of notificationEvents) expect(body.events[event]).toBe(event === 'new_merge_request');
  });

  it.each(notificationEvents)('switches %s on and off through the query string', async (event) => {
    const on = await (await api(`${path(id)}?level=custom&${event}=true`, { method: 'PUT' })).json();
    expect(on.events[event]).toBe(true);
    const off = await (await api(`${path(id)}?${event}=false`, { method: 'PUT' })).json();
    expect(off.events[event]).toBe(false);
  });

  it('accepts a form body with string booleans', async () => {
    const body = await (await api(path(id), { method: 'PUT', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'level=custom&failed_pipeline=true' })).json();
    expect(body.events.failed_pipeline).toBe(true);
  });

  it('keeps events sent with another level and shows them once the level becomes custom', async () => {
    await api(path(id), json('PUT', { level: 'custom', success_pipeline: false }));
    expect(await (await api(path(id), json('PUT', { level: 'watch', success_pipeline: 'true' }))).json()).toEqual({ level: 'watch' });
    const custom = await (await api(path(id), json('PUT', { level: 'custom' }))).json();
    expect(custom.events.success_pipeline).toBe(true);
  });

  it('finds the same settings by numeric id and by path', async () => {
    const byPath = await (await api(path(id))).json();
    const byId = await (await api(path(await numeric()))).json();
    expect(byId).toEqual(byPath);
  });

  it('refuses an unknown level, naming it, and stores nothing', async () => {
    const before = await storedSettings();
    const response = await api(path(id), json('PUT', { level: 'loud', new_note: true }));
    expect(response.status).toBe(400);
    expect((await response.json()).message).toMatch(/level/);
    expect(await storedSettings()).toBe(before);
  });

  it('refuses a non-boolean event, naming it, and stores nothing', async () => {
    const before = await storedSettings();
    const response = await api(`${path(id)}?level=custom&new_note=yes`, { method: 'PUT' });
    expect(response.status).toBe(400);
    expect((await response.json()).message).toMatch(/new_note/);
    expect(await storedSettings()).toBe(before);
  });

  it('answers 404 for one the user may not see, exactly as for one that does not exist', async () => {
    const hidden = await api(path(id), { token: malloryToken });
    const missing = await api(path('no-such-thing'), { token: malloryToken });
    expect(hidden.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(await hidden.json()).toEqual({ message: notFound });
    expect(await missing.json()).toEqual({ message: notFound });
    const hiddenPut = await api(path(id), { ...json('PUT', { level: 'watch' }), token: malloryToken });
    expect(hiddenPut.status).toBe(404);
  });

  it('lets anyone signed in use a public one', async () => {
    expect((await api(path(publicId), { token: malloryToken })).status).toBe(200);
  });
});

describe('a project in a personal namespace', () => {
  it('is visible to the namespace owner, and to nobody else while private', async () => {
    const mine = await api('/projects/jsmith%2Fdotfiles/notification_settings');
    expect(mine.status).toBe(200);
    expect(await mine.json()).toEqual({ level: 'global' });
    const put = await api('/projects/jsmith%2Fdotfiles/notification_settings', json('PUT', { level: 'watch' }));
    expect(await put.json()).toEqual({ level: 'watch' });
    const byId = (await server.storage.namespaces.projectByFullPath('jsmith/dotfiles'))!.id;
    expect((await api(`/projects/${byId}/notification_settings`)).status).toBe(200);
    const others = await api('/projects/jsmith%2Fdotfiles/notification_settings', { token: malloryToken });
    expect(others.status).toBe(404);
  });
});

describe("what the service's clients depend on", () => {
  it('ignores unknown query and body parameters, and still checks the known ones', async () => {
    // python-gitlab sends the id again in the query of a settings GET.
    const get = await api('/projects/acme%2Fwidgets/notification_settings?id=acme%2Fwidgets');
    expect(get.status).toBe(200);
    // gitbeaker's typed options include events of later releases.
    const before = await storedSettings();
    const put = await api('/groups/acme/notification_settings', json('PUT', { level: 'custom', new_issue: true, fixed_pipeline: true, moved_project: false }));
    expect(put.status).toBe(200);
    const answer = await put.json();
    expect(answer.events.new_issue).toBe(true);
    expect(Object.keys(answer.events).sort()).toEqual([...notificationEvents].sort());
    expect(await storedSettings()).not.toBe(before);
    expect(await storedSettings()).not.toContain('fixed_pipeline');
    // A known parameter out of range is still refused, and changes nothing.
    const stored = await storedSettings();
    const bad = await api('/groups/acme/notification_settings?unknown=1', json('PUT', { level: 'loud', fixed_pipeline: true }));
    expect(bad.status).toBe(400);
    expect(await storedSettings()).toBe(stored);
  });

  it('answers JSON with Content-Type application/json exactly, errors included', async () => {
    expect((await api('/user')).headers.get('content-type')).toBe('application/json');
    expect((await api('/user', { token: 'not-a-token' })).headers.get('content-type')).toBe('application/json');
    expect((await api('/groups/no-such-group')).headers.get('content-type')).toBe('application/json');
    const token = await fetch(`${server.baseUrl}/oauth/token`, form({ grant_type: 'password', username: 'jsmith', password: 'wrong' }));
    expect(token.headers.get('content-type')).toBe('application/json');
  });
});

describe('groups and projects (fetched before their settings)', () => {
  it('shows a group by id and by path, and hides one the user may not see', async () => {
    const byPath = await (await api('/groups/acme')).json();
    expect(byPath).toMatchObject({ path: 'acme', full_path: 'acme', parent_id: null, web_url: `${server.baseUrl}/groups/acme` });
    expect(await (await api(`/groups/${byPath.id}`)).json()).toEqual(byPath);
    const hidden = await api('/groups/acme', { token: malloryToken });
    expect(hidden.status).toBe(404);
    expect(await hidden.json()).toEqual({ message: '404 Group Not Found' });
  });

  it('shows a project with its namespace, a personal one included, and answers under /api/v4', async () => {
    const project = await (await api('/projects/acme%2Fwidgets')).json();
    expect(project).toMatchObject({ path_with_namespace: 'acme/widgets', namespace: { kind: 'group', path: 'acme' } });
    const personal = await (await api('/projects/jsmith%2Fdotfiles')).json();
    expect(personal).toMatchObject({ path_with_namespace: 'jsmith/dotfiles', namespace: { kind: 'user', path: 'jsmith', name: 'Jane Smith' } });
    const v4 = await fetch(`${server.baseUrl}/api/v4/projects/${project.id}`, { headers: { authorization: `Bearer ${jsmithToken}` } });
    expect(await v4.json()).toEqual(project);
    expect((await api('/projects/jsmith%2Fdotfiles', { token: malloryToken })).status).toBe(404);
  });
});
