// The test-helper area over HTTP (openapi.yaml, tag test_helpers): off unless enabled, administrators only, events
// recorded with their recipients and nothing recorded for a refused one, and the mail listed back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, signIn } from '../support/agent.js';
import { json, startTestServer, type TestServer } from '../support/server.js';

const rootPat = 'tbpat-root-test-helpers-token-0000000000000000';
const jsmithPat = 'tbpat-jsmith-test-helpers-token-00000000000000';
const readOnlyRootPat = 'tbpat-root-read-only-token-000000000000000000';
const helperSeed = {
  users: [
    {
      username: 'root',
      email: 'root@example.com',
      name: 'Administrator',
      password: 'administrator-password',
      is_admin: true,
      personal_access_tokens: [
        { name: 'tests', token: rootPat, scopes: ['api'] },
        { name: 'reader', token: readOnlyRootPat, scopes: ['read_api'] },
      ],
    },
    { username: 'jsmith', email: 'jsmith@example.com', name: 'Jane Smith', password: 'correct-horse-battery', personal_access_tokens: [{ name: 't', token: jsmithPat, scopes: ['api'] }] },
    { username: 'awong', email: 'awong@example.com', name: 'Alex Wong', password: 'alex-wong-password' },
    { username: 'mallory', email: 'mallory@example.com', name: 'Mallory', password: 'mallory-password' },
  ],
  groups: [{ path: 'acme', name: 'Acme', visibility: 'private', members: [{ username: 'jsmith', access_level: 50 }, { username: 'awong', access_level: 30 }] }],
  projects: [{ namespace: 'acme', path: 'widgets', name: 'Widgets', visibility: 'private' }],
};

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ seed: helperSeed, testHelpers: true });
});
afterAll(() => server.close());

const helper = (path: string, init: RequestInit & { token?: string } = {}) => {
  const { token = rootPat, ...rest } = init;
  const headers = new Headers(rest.headers);
  headers.set('PRIVATE-TOKEN', token);
  return fetch(`${server.baseUrl}/api/v3/test_helpers${path}`, { ...rest, headers });
};
const emit = (body: unknown, token?: string, project = 'acme%2Fwidgets') => helper(`/projects/${project}/notification_events`, { ...json('POST', body), ...(token ? { token } : {}) });
const eventCount = async () => (server.kind === 'file' ? server.store.data.notification_events.length : Number((await server.sql<{ n: string }>('SELECT count(*) AS n FROM notification_events'))[0]!.n));

describe('the test-helper area', () => {
  it('records an event and answers its recipients with their reasons; the mail is listed back, newest first', async () => {
    // awong watches the project; jsmith is the author (never mailed about their own action); mallory is mentioned
    // but may not see the private project.
    expect((await fetch(`${server.baseUrl}/api/v3/projects/acme%2Fwidgets/notification_settings?level=watch`, { method: 'PUT', headers: { 'PRIVATE-TOKEN': jsmithPat } })).status).toBe(200);
    await server.storage.notificationSettings.change(
      { user_id: (await server.storage.users.byUsername('awong'))!.id, source_type: 'global', source_id: null, level: 'watch', notification_email: null, events: (await import('../../src/domain/notification-levels.js')).noEvents() },
      { events: {} },
    );
    const response = await emit({ kind: 'new_issue', title: 'The bell does not ring', author: 'jsmith', participants: ['jsmith'], mentioned: ['mallory'] });
    expect(response.status).toBe(201);
    const event = await response.json();
    expect(event).toMatchObject({ kind: 'new_issue', title: 'The bell does not ring', author: 'jsmith', recipients: [{ username: 'awong', email: 'awong@example.com', reason: 'watching' }] });
    expect(event.recipients).toHaveLength(1);

    const listed = await (await helper(`/notification_messages?event_id=${event.id}`)).json();
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ event_id: event.id, username: 'awong', to: 'awong@example.com', reason: 'watching', status: 'queued', attempts: 0, last_error: null, sent_at: null });
    expect(listed[0].subject).toContain('acme/widgets');
    expect(listed[0].headers).toMatchObject({ 'X-GitLab-NotificationReason': 'watching', 'X-GitLab-Project': 'acme/widgets' });

    // A failed pipeline goes to the pipeline's user only, whatever the watchers.
    const pipeline = await (await emit({ kind: 'failed_pipeline', title: 'Pipeline #1 failed', author: 'awong', pipeline_user: 'jsmith' })).json();
    expect(pipeline.recipients).toEqual([{ user_id: expect.any(Number), username: 'jsmith', email: 'jsmith@example.com', reason: 'participating' }]);
    const mine = await (await helper('/notification_messages?username=jsmith')).json();
    expect(mine.map((m: { event_id: string }) => m.event_id)).toEqual([pipeline.id]);
    const all = await (await helper('/notification_messages?per_page=1')).json();
    expect(all.map((m: { event_id: string }) => m.event_id)).toEqual([pipeline.id]);
  });

  it('refuses, recording nothing: an unknown user, a pipeline user on an issue, an author who may not see the project, an unknown project', async () => {
    const before = await eventCount();
    const refused = async (body: unknown, status: number, message: string | RegExp, project?: string) => {
      const response = await emit(body, undefined, project);
      expect(response.status).toBe(status);
      expect((await response.json()).message).toMatch(message);
    };
    await refused({ kind: 'new_issue', title: 't', author: 'nobody' }, 400, '400 Bad request - author must name an existing user: there is no user "nobody"');
    await refused({ kind: 'new_issue', title: 't', author: 'jsmith', participants: ['awong', 'ghost'] }, 400, '400 Bad request - participants must name existing users: there is no user "ghost"');
    await refused({ kind: 'new_issue', title: 't', author: 'jsmith', mentioned: ['ghost'] }, 400, '400 Bad request - mentioned must name existing users: there is no user "ghost"');
    await refused({ kind: 'new_note', title: 't', author: 'jsmith', pipeline_user: 'awong' }, 400, '400 Bad request - pipeline_user is only for failed_pipeline and success_pipeline events');
    await refused({ kind: 'failed_pipeline', title: 't', author: 'jsmith', participants: ['awong'] }, 400, "400 Bad request - participants are not for pipeline events, whose mail goes to the pipeline's user (pipeline_user) only");
    await refused({ kind: 'success_pipeline', title: 't', author: 'jsmith', mentioned: ['awong'] }, 400, /^400 Bad request - mentioned are not for pipeline events/);
    await refused({ kind: 'new_issue', title: 't', author: 'mallory' }, 400, '400 Bad request - author mallory may not see acme/widgets');
    await refused({ kind: 'no_such_event', title: 't', author: 'jsmith' }, 400, /kind/);
    await refused({ kind: 'new_issue', author: 'jsmith' }, 400, /title/);
    await refused({ kind: 'new_issue', title: 't', author: 'jsmith' }, 404, '404 Project Not Found', 'acme%2Fnothing');
    expect(await eventCount()).toBe(before);
    expect((await helper('/notification_messages?username=ghost')).status).toBe(400);
  });

  it('is for administrators with the scope the operation needs, and for nobody anonymous', async () => {
    const before = await eventCount();
    const body = { kind: 'new_issue', title: 't', author: 'jsmith' };
    const notAdmin = await emit(body, jsmithPat);
    expect(notAdmin.status).toBe(403);
    expect((await notAdmin.json()).message).toBe('403 Forbidden - test helpers are for administrators');
    expect((await helper('/notification_messages', { token: jsmithPat })).status).toBe(403);
    expect((await emit(body, readOnlyRootPat)).status).toBe(403);
    expect((await helper('/notification_messages', { token: readOnlyRootPat })).status).toBe(200);
    expect((await fetch(`${server.baseUrl}/api/v3/test_helpers/notification_messages`)).status).toBe(401);
    expect(await eventCount()).toBe(before);
  });
});

describe('the administrators\' notification mail page', () => {
  it('shows an administrator each message with its recipient, reason and status (a failure with its reason), is not there for others, and sends visitors to sign in', async () => {
    const event = await (await emit({ kind: 'failed_pipeline', title: 'Pipeline <#9> failed', author: 'awong', pipeline_user: 'jsmith' })).json();
    const [message] = await (await helper(`/notification_messages?event_id=${event.id}`)).json();
    await server.storage.mail.markFailed(message.id, 'refused: 550 5.1.1 <jsmith@example.com>: mailbox unavailable');
    const root = new Agent(server.baseUrl);
    expect((await signIn(root, 'root', 'administrator-password')).status).toBe(302);
    const page = await root.get('/admin/notification_messages');
    expect(page.status).toBe(200);
    const text = await page.text();
    // The title is escaped, and the failure says why.
    expect(text).toContain('acme/widgets | Pipeline &lt;#9&gt; failed (failed_pipeline)');
    expect(text).toContain('jsmith &lt;jsmith@example.com&gt;');
    expect(text).toContain('Failed: refused: 550 5.1.1 &lt;jsmith@example.com&gt;: mailbox unavailable');
    expect(text).toContain('Queued');

    const jsmith = new Agent(server.baseUrl);
    expect((await signIn(jsmith, 'jsmith', 'correct-horse-battery')).status).toBe(302);
    expect((await jsmith.get('/admin/notification_messages')).status).toBe(404);
    const visitor = await new Agent(server.baseUrl).get('/admin/notification_messages');
    expect(visitor.status).toBe(302);
    expect(visitor.headers.get('location')).toMatch(/^\/users\/sign_in/);
  });
});

describe('an instance without test helpers', () => {
  it('answers 404 on the whole area, before looking at the request, and records nothing', async () => {
    const plain = await startTestServer({ seed: helperSeed });
    try {
      const call = (path: string, init: RequestInit = {}) => fetch(`${plain.baseUrl}/api/v3/test_helpers${path}`, { ...init, headers: { ...init.headers, 'PRIVATE-TOKEN': rootPat } });
      for (const response of [
        await call('/notification_messages'),
        await call('/projects/acme%2Fwidgets/notification_events', json('POST', { kind: 'new_issue', title: 't', author: 'jsmith' })),
        // An invalid body too: the validator never sees it, so nothing tells the area exists.
        await call('/projects/acme%2Fwidgets/notification_events', json('POST', { kind: 'nonsense' })),
        await call('/NOTIFICATION_MESSAGES'),
      ]) {
        expect(response.status).toBe(404);
        expect(await response.json()).toEqual({ message: '404 Not Found' });
      }
      expect(plain.kind === 'file' ? plain.store.data.notification_events : await plain.sql('SELECT * FROM notification_events')).toEqual([]);
    } finally {
      await plain.close();
    }
  });
});
