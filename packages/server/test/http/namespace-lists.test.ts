// The service's lists of groups and projects and its membership look-ups, over real HTTP on both stores: the one
// visibility rule, the lists' filters and order, and the pagination headers clients walk.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

const pat = (username: string) => `tbpat-${username}-lists-token-00000000000000000`;
const user = (username: string, extra: Record<string, unknown> = {}) => ({
  username,
  email: `${username}@example.com`,
  name: username.toUpperCase(),
  password: 'lists-test-password',
  personal_access_tokens: [{ name: 'lists', token: pat(username), scopes: ['api'] }],
  ...extra,
});
const listsSeed = {
  users: [user('jsmith'), user('bob'), user('carol'), user('root', { is_admin: true })],
  groups: [
    { path: 'acme', name: 'Acme', visibility: 'private', members: [{ username: 'jsmith', access_level: 50 }, { username: 'bob', access_level: 20 }] },
    { path: 'zeta', name: 'Zeta', visibility: 'public', members: [{ username: 'jsmith', access_level: 30 }] },
    { path: 'hidden', name: 'Hidden', visibility: 'private', members: [] },
    { path: 'lobby', name: 'Lobby', visibility: 'internal', members: [] },
    { path: 'backstage', name: 'Backstage', visibility: 'private', members: [] },
  ],
  projects: [
    { namespace: 'acme', path: 'widgets', name: 'Widgets', visibility: 'private', members: [] },
    { namespace: 'hidden', path: 'vault', name: 'Vault', visibility: 'private', members: [] },
    { namespace: 'backstage', path: 'props', name: 'Props', visibility: 'private', members: [{ username: 'carol', access_level: 40 }] },
    { namespace: 'lobby', path: 'notice', name: 'Notice Board', visibility: 'public', members: [] },
    { namespace: 'jsmith', path: 'dotfiles', name: 'dotfiles', visibility: 'private', members: [] },
  ],
};

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ seed: listsSeed });
});
afterAll(() => server.close());

const get = async (path: string, as = 'jsmith') => {
  const response = await fetch(`${server.baseUrl}/api/v4${path}`, { headers: { 'PRIVATE-TOKEN': pat(as) } });
  return { response, body: await response.json() };
};
const paths = async (path: string, as?: string) => (await get(path, as)).body.map((x: { path_with_namespace?: string; full_path?: string }) => x.path_with_namespace ?? x.full_path);

describe('GET /groups', () => {
  it("lists a user's own groups by name; all_available adds what they may see, never a private group of others", async () => {
    expect(await paths('/groups')).toEqual(['acme', 'zeta']);
    expect(await paths('/groups?all_available=true')).toEqual(['acme', 'lobby', 'zeta']);
    // A member of one of a private group's projects belongs to the group, as the notification settings decide.
    expect(await paths('/groups', 'carol')).toEqual(['backstage']);
    expect(await paths('/groups?all_available=true', 'carol')).toEqual(['backstage', 'lobby', 'zeta']);
  });

  it('lists every group to an administrator', async () => {
    expect(await paths('/groups', 'root')).toEqual(['acme', 'backstage', 'hidden', 'lobby', 'zeta']);
    expect(await paths('/groups?all_available=false', 'root')).toEqual([]);
  });

  it('filters by min_access_level, owned, search and top_level_only, and orders as asked', async () => {
    expect(await paths('/groups?min_access_level=40')).toEqual(['acme']);
    expect(await paths('/groups?min_access_level=10', 'bob')).toEqual(['acme']);
    expect(await paths('/groups?min_access_level=30', 'bob')).toEqual([]);
    expect(await paths('/groups?owned=true')).toEqual(['acme']);
    expect(await paths('/groups?owned=false')).toEqual(['acme', 'zeta']);
    expect(await paths('/groups?search=ZE')).toEqual(['zeta']);
    expect(await paths('/groups?top_level_only=true')).toEqual(['acme', 'zeta']);
    expect(await paths('/groups?sort=desc')).toEqual(['zeta', 'acme']);
    expect(await paths('/groups?order_by=id&sort=desc&all_available=true')).toEqual(['lobby', 'zeta', 'acme']);
  });

  it('refuses a min_access_level the service does not have, with the message naming it', async () => {
    const { response, body } = await get('/groups?min_access_level=7');
    expect(response.status).toBe(400);
    expect(body.message).toMatch(/min_access_level/);
  });
});

describe('GET /projects', () => {
  it('lists every project the user may see, newest first, and narrows by membership, owned, visibility and search', async () => {
    expect(await paths('/projects')).toEqual(['jsmith/dotfiles', 'lobby/notice', 'acme/widgets']);
    expect(await paths('/projects?membership=true')).toEqual(['jsmith/dotfiles', 'acme/widgets']);
    expect(await paths('/projects?owned=true')).toEqual(['jsmith/dotfiles']);
    expect(await paths('/projects?visibility=public')).toEqual(['lobby/notice']);
    expect(await paths('/projects?search=widg')).toEqual(['acme/widgets']);
    expect(await paths('/projects?order_by=name&sort=asc')).toEqual(['jsmith/dotfiles', 'lobby/notice', 'acme/widgets']);
    expect(await paths('/projects?membership=true&min_access_level=50')).toEqual(['jsmith/dotfiles', 'acme/widgets']);
    expect(await paths('/projects?min_access_level=30', 'bob')).toEqual([]);
    expect(await paths('/projects?min_access_level=20', 'bob')).toEqual(['acme/widgets']);
    expect(await paths('/projects', 'carol')).toEqual(['lobby/notice', 'backstage/props']);
  });

  it("reads a yes-or-no filter as the service does (python-gitlab's True), and refuses one it cannot read", async () => {
    for (const yes of ['True', 'TRUE', '1', 'yes', 't', 'on']) expect(await paths(`/projects?membership=${yes}`), yes).toEqual(['jsmith/dotfiles', 'acme/widgets']);
    for (const no of ['False', '0', 'no', 'f', 'off']) expect(await paths(`/projects?membership=${no}`), no).toEqual(['jsmith/dotfiles', 'lobby/notice', 'acme/widgets']);
    const { response, body } = await get('/projects?owned=maybe');
    expect(response.status).toBe(400);
    expect(body.message).toMatch(/owned/);
  });

  it('answers the simple view without visibility', async () => {
    const { body } = await get('/projects?simple=true&search=notice');
    expect(body).toHaveLength(1);
    expect(body[0]).not.toHaveProperty('visibility');
    expect(body[0]).toMatchObject({ path_with_namespace: 'lobby/notice', namespace: { kind: 'group', full_path: 'lobby' } });
  });
});

describe('pagination', () => {
  it('answers page and per_page with the headers the service sends, Link without the token', async () => {
    const grant = await fetch(`${server.baseUrl}/oauth/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'password', username: 'root', password: 'lists-test-password', scope: 'read_api' }) });
    const token = (await grant.json()).access_token as string;
    const first = await fetch(`${server.baseUrl}/api/v4/groups?all_available=true&per_page=2&access_token=${token}`);
    expect(first.status).toBe(200);
    expect((await first.json()).map((g: { path: string }) => g.path)).toEqual(['acme', 'backstage']);
    const header = (name: string) => first.headers.get(name);
    expect([header('x-total'), header('x-total-pages'), header('x-page'), header('x-per-page'), header('x-next-page'), header('x-prev-page')]).toEqual(['5', '3', '1', '2', '2', '']);
    const link = header('link')!;
    expect(link).not.toContain(token);
    expect(link).not.toMatch(/access_token/);
    const rels = Object.fromEntries([...link.matchAll(/<([^>]+)>; rel="(\w+)"/g)].map((m) => [m[2], new URL(m[1]!)]));
    expect(Object.keys(rels)).toEqual(['next', 'first', 'last']);
    expect(rels.next!.pathname).toBe('/api/v4/groups');
    expect(Object.fromEntries(rels.next!.searchParams)).toEqual({ all_available: 'true', per_page: '2', page: '2' });
    expect(rels.last!.searchParams.get('page')).toBe('3');

    const last = await fetch(rels.last!, { headers: { 'PRIVATE-TOKEN': pat('root') } });
    expect((await last.json()).map((g: { path: string }) => g.path)).toEqual(['zeta']);
    expect([last.headers.get('x-next-page'), last.headers.get('x-prev-page')]).toEqual(['', '2']);
    expect(last.headers.get('link')).toMatch(/rel="prev"/);
    expect(last.headers.get('link')).not.toMatch(/rel="next"/);
  });

  it('answers 20 a page by default, at most 100, and an empty page past the end', async () => {
    const { response } = await get('/projects');
    expect(response.headers.get('x-per-page')).toBe('20');
    expect((await get('/projects?per_page=1000')).response.headers.get('x-per-page')).toBe('100');
    const past = await get('/projects?page=9');
    expect(past.body).toEqual([]);
    expect(past.response.headers.get('x-total')).toBe('3');
  });
});

describe('members/all/:user_id', () => {
  const ids: Record<string, number> = {};
  beforeAll(async () => {
    for (const name of ['jsmith', 'bob', 'carol']) ids[name] = (await get('/user', name)).body.id;
  });

  it("answers a group member's level, and 404 Member Not Found for a user who is none", async () => {
    const { response, body } = await get(`/groups/acme/members/all/${ids.bob}`);
    expect(response.status).toBe(200);
    expect(body).toEqual({ id: ids.bob, username: 'bob', name: 'BOB', state: 'active', avatar_url: null, web_url: `${server.baseUrl}/bob`, access_level: 20, expires_at: null, membership_state: 'active' });
    const none = await get(`/groups/acme/members/all/${ids.carol}`);
    expect([none.response.status, none.body]).toEqual([404, { message: '404 Member Not Found' }]);
    expect((await get(`/groups/acme/members/all/99999`)).body).toEqual({ message: '404 Member Not Found' });
  });

  it("answers a project member's inherited level, and the personal namespace's owner as owner", async () => {
    expect((await get(`/projects/acme%2Fwidgets/members/all/${ids.bob}`)).body.access_level).toBe(20);
    expect((await get(`/projects/backstage%2Fprops/members/all/${ids.carol}`, 'carol')).body.access_level).toBe(40);
    expect((await get(`/projects/jsmith%2Fdotfiles/members/all/${ids.jsmith}`)).body.access_level).toBe(50);
  });

  it('answers 404 for a group or project the caller may not see, exactly as for a missing one', async () => {
    const group = await get(`/groups/acme/members/all/${ids.bob}`, 'carol');
    expect([group.response.status, group.body]).toEqual([404, { message: '404 Group Not Found' }]);
    const project = await get(`/projects/acme%2Fwidgets/members/all/${ids.jsmith}`, 'carol');
    expect([project.response.status, project.body]).toEqual([404, { message: '404 Project Not Found' }]);
  });
});
