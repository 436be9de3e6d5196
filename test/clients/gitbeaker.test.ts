// @gitbeaker/rest, the most used GitLab API client for JavaScript, against the reference server, configured only
// with its base URL: the current user and the notification settings globally, per group and per project, with a
// personal access token and with an OAuth token, and its errors for 400, 401, 403 and 404.
import { Gitlab, GitbeakerRequestError } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installedVersion } from './installed.js';
import { seed, startTestServer, type TestServer } from '../../packages/server/test/support/server.js';

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
