// @gitbeaker/rest, the most used GitLab API client for JavaScript, against the reference server, configured only
// with its base URL: the current user and the notification settings globally, per group and per project, with a
// personal access token and with an OAuth token, and its errors for 400, 401, 403 and 404.
import { Gitlab, GitbeakerRequestError } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installedVersion } from './installed.js';
import { seed, startTestServer, type TestServer } from '../../packages/server/test/support/server.js';
import { createPersonalAccessToken } from '../../packages/server/src/domain/accounts.js';

const version = installedVersion('@gitbeaker/rest');

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

async function passwordToken(username: string, password: string, scope: string): Promise<string> {
  const response = await fetch(`${server.baseUrl}/oauth/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'password', username, password, scope }),
  });
  return ((await response.json()) as { access_token: string }).access_token;
}

/** What gitbeaker threw: its error class, the status and its description (the answer's `message`). */
async function failure(call: Promise<unknown>): Promise<{ status: number; description: string }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GitbeakerRequestError);
  const cause = (error as GitbeakerRequestError).cause as { description: string; response: Response };
  return { status: cause.response.status, description: cause.description };
}

describe(`@gitbeaker/rest ${version}`, () => {
  it.each(['token', 'oauthToken'] as const)('reads the current user and edits settings everywhere with %s', async (kind) => {
    const credentials = kind === 'token' ? { token: seed.jsmith.pat } : { oauthToken: await passwordToken('jsmith', seed.jsmith.password, 'api') };
    const api = new Gitlab({ host: server.baseUrl, ...credentials });

    expect(await api.Users.showCurrentUser()).toMatchObject({ username: 'jsmith' });

    const global = await api.NotificationSettings.edit({ level: 'watch' });
    expect(global).toMatchObject({ level: 'watch' });
    expect(await api.NotificationSettings.show()).toMatchObject({ level: 'watch', notification_email: expect.any(String) });

    // gitbeaker's typed options name events of later releases too (fixed_pipeline, moved_project): ignored.
    const group = await api.NotificationSettings.edit({ groupId: 'acme', level: 'custom', new_issue: true, fixed_pipeline: true } as never);
    expect(group).toMatchObject({ level: 'custom', events: { new_issue: true } });
    expect(await api.NotificationSettings.show({ groupId: 'acme' })).toEqual(group);

    const project = await api.NotificationSettings.edit({ projectId: 'acme/widgets', level: 'mention' });
    expect(project).toEqual({ level: 'mention' });
    const { id } = await api.Projects.show('acme/widgets');
    expect(await api.NotificationSettings.show({ projectId: id })).toEqual({ level: 'mention' });
    expect(await api.Groups.show('acme')).toMatchObject({ full_path: 'acme' });
  });

  it('throws its request error with the status and the message for 400, 401, 403 and 404', async () => {
    const api = new Gitlab({ host: server.baseUrl, token: seed.jsmith.pat });
    expect(await failure(api.NotificationSettings.edit({ level: 'loud' as never }))).toEqual({
      status: 400,
      description: expect.stringMatching(/^400 Bad request - level /),
    });
    expect(await failure(new Gitlab({ host: server.baseUrl, token: 'tbpat-not-a-token' }).Users.showCurrentUser())).toEqual({
      status: 401,
      description: '401 Unauthorized',
    });
    const readOnly = new Gitlab({ host: server.baseUrl, oauthToken: await passwordToken('jsmith', seed.jsmith.password, 'read_api') });
    expect(await failure(readOnly.NotificationSettings.edit({ level: 'watch' }))).toMatchObject({ status: 403, description: expect.stringContaining('insufficient_scope') });
    expect(await failure(api.NotificationSettings.show({ projectId: 'acme/no-such-project' }))).toEqual({ status: 404, description: '404 Project Not Found' });
  });
});

// The first calls a GitLab tool makes and the lists apps read after sign-in (issue 40). gitbeaker 43 has no
// `Version` resource any more (the service's /version answers what /metadata does), so `Metadata.show()` stands for
// both; python-gitlab's test asks /version.
describe(`@gitbeaker/rest ${version}: the instance, the token in hand, lists and members`, () => {
  it('shows the metadata and the personal access token in hand, and revokes it', async () => {
    const api = new Gitlab({ host: server.baseUrl, token: seed.awong.pat });
    expect(await api.Metadata.show()).toMatchObject({ version: '17.11.0', enterprise: false, kas: { enabled: false } });
    expect(await api.PersonalAccessTokens.show()).toMatchObject({ name: 'ci', scopes: ['read_api'], active: true, revoked: false });

    const oauth = new Gitlab({ host: server.baseUrl, oauthToken: await passwordToken('mallory', seed.mallory.password, 'read_user') });
    expect(await failure(oauth.PersonalAccessTokens.show())).toEqual({ status: 404, description: '404 Not Found' });

    const mallory = await server.storage.users.byUsername('mallory');
    const { token } = await createPersonalAccessToken(server.storage, mallory!.id, { name: 'gitbeaker', scopes: ['read_repository'] });
    const own = new Gitlab({ host: server.baseUrl, token });
    expect(await own.PersonalAccessTokens.show()).toMatchObject({ name: 'gitbeaker', scopes: ['read_repository'] });
    await own.PersonalAccessTokens.remove();
    expect(await failure(own.PersonalAccessTokens.show())).toEqual({ status: 401, description: '401 Unauthorized' });
  });

  it('walks every page of Groups.all({ minAccessLevel }) and Projects.all({ membership: true }) by their Link headers', async () => {
    const api = new Gitlab({ host: server.baseUrl, token: seed.jsmith.pat });
    // One a page, so that gitbeaker has to follow the next links to the end.
    const owned = await api.Groups.all({ minAccessLevel: 50, perPage: 1 });
    expect(owned.map((g) => g.full_path)).toEqual(['acme', 'opensource']);
    const mine = await api.Projects.all({ membership: true, perPage: 1 });
    expect(mine.map((p) => p.path_with_namespace).sort()).toEqual(['acme/website', 'acme/widgets', 'jsmith/dotfiles', 'opensource/bell']);
    const { data, paginationInfo } = await api.Projects.all({ membership: true, perPage: 3, maxPages: 1, showExpanded: true });
    expect(data).toHaveLength(3);
    expect(paginationInfo).toMatchObject({ total: 4, totalPages: 2, current: 1, next: 2, previous: null, perPage: 3 });
    const reader = new Gitlab({ host: server.baseUrl, token: seed.awong.pat });
    expect((await reader.Groups.all()).map((g) => g.full_path)).toEqual(['acme']);
  });

  it("checks a user's inherited membership as oauth2-proxy and Grafana do (members/all)", async () => {
    const api = new Gitlab({ host: server.baseUrl, token: seed.jsmith.pat });
    const awong = await new Gitlab({ host: server.baseUrl, token: seed.awong.pat }).Users.showCurrentUser();
    expect(await api.GroupMembers.show('acme', awong.id, { includeInherited: true })).toMatchObject({ username: 'awong', access_level: 30 });
    expect(await api.ProjectMembers.show('acme/widgets', awong.id, { includeInherited: true })).toMatchObject({ username: 'awong', access_level: 30 });
    expect(await failure(api.GroupMembers.show('opensource', awong.id, { includeInherited: true }))).toEqual({ status: 404, description: '404 Member Not Found' });
  });
});
