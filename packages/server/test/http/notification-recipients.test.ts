// Who is mailed about an event, end to end: each row sets its users' notification levels through the API (global,
// group and project settings, custom events, the notification e-mail), emits one event through the test helpers as
// an administrator, and checks both the recipients the 201 names and the messages a real SMTP server received for
// that event (recipient, X-GitLab-NotificationReason), and nobody else. The rows are an explicit statement of the
// rules (recipients.ts, after GitLab's NotificationService), independent of the domain test's table.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailDelivery, smtpTransport, type MailDelivery } from '../../src/domain/mail-delivery.js';
import { startSmtpServer, type ReceivedMessage, type TestSmtpServer } from '../../../../test/support/smtp.js';
import { json, startTestServer, type TestServer } from '../support/server.js';

const allEvents = [
  'new_note',
  'new_issue',
  'reopen_issue',
  'close_issue',
  'reassign_issue',
  'new_merge_request',
  'reopen_merge_request',
  'close_merge_request',
  'reassign_merge_request',
  'merge_merge_request',
  'failed_pipeline',
  'success_pipeline',
] as const;
type Kind = (typeof allEvents)[number];
type Reason = 'participating' | 'mentioned' | 'watching' | 'custom';

const usernames = ['root', 'ava', 'pat', 'gina', 'walt', 'mona', 'nick', 'pia', 'emma', 'olga'] as const;
type Username = (typeof usernames)[number];
const patOf = (username: Username) => `tbpat-${username}-recipients-token-`.padEnd(46, '0');

// The private group acme and its private project acme/widgets: ava, pat, mona, pia and emma are members of the
// project; gina and walt of the group only. nick belongs to neither and cannot see them. ava/site is a public
// project in ava's namespace, which nick and olga (no membership anywhere) can see.
const recipientsSeed = {
  users: usernames.map((username) => ({
    username,
    email: `${username}@example.com`,
    ...(username === 'emma' ? { secondary_emails: ['emma@home.example'] } : {}),
    name: username,
    password: `${username}-password-long-enough`,
    ...(username === 'root' ? { is_admin: true } : {}),
    personal_access_tokens: [{ name: 'tests', token: patOf(username), scopes: ['api'] }],
  })),
  groups: [{ path: 'acme', name: 'Acme', visibility: 'private', members: [{ username: 'gina', access_level: 30 }, { username: 'walt', access_level: 30 }] }],
  projects: [
    {
      namespace: 'acme',
      path: 'widgets',
      name: 'Widgets',
      visibility: 'private',
      members: ['ava', 'pat', 'mona', 'pia', 'emma'].map((username) => ({ username, access_level: 30 })),
    },
    { namespace: 'ava', path: 'site', name: 'Site', visibility: 'public' },
  ],
};

/** A setting a row puts in place through the API before its event (and takes back after it). */
interface Setting {
  user: Username;
  on: 'global' | 'group acme' | 'project acme/widgets' | 'project ava/site';
  level: 'global' | 'disabled' | 'participating' | 'mention' | 'watch' | 'custom';
  /** With `custom`: the events switched on; every other one is sent switched off. */
  events?: Kind[];
  notification_email?: string;
}

interface Row {
  /** Unique, and the event's title: the mail's subject carries it. */
  title: string;
  settings: Setting[];
  project?: 'acme/widgets' | 'ava/site';
  event: { kind: Kind; author: Username; participants?: Username[]; mentioned?: Username[]; pipeline_user?: Username };
  /** Every recipient, with the reason; anybody else mailed fails the row. */
  expected: Array<[Username, Reason]>;
  /** Where a recipient's mail goes when not username@example.com. */
  addresses?: Partial<Record<Username, string>>;
}

const P = 'participating',
  M = 'mentioned',
  W = 'watching',
  C = 'custom';
const widgets = 'project acme/widgets' as const;
const group = 'group acme' as const;

const rows: Row[] = [
  // Nothing stored: everyone is on the default global `participating`.
  { title: 'R01 default level, participant mailed', settings: [], event: { kind: 'new_issue', author: 'ava', participants: ['ava', 'pat'] }, expected: [['pat', P]] },
  { title: 'R02 default level, group member not mailed', settings: [], event: { kind: 'new_issue', author: 'ava', participants: ['ava'] }, expected: [] },

  // Precedence: project over group over global.
  { title: 'R03 global watch', settings: [{ user: 'gina', on: 'global', level: 'watch' }], event: { kind: 'new_issue', author: 'ava', participants: ['ava'] }, expected: [['gina', W]] },
  {
    title: 'R04 global watch, project disabled',
    settings: [
      { user: 'gina', on: 'global', level: 'watch' },
      { user: 'gina', on: widgets, level: 'disabled' },
    ],
    event: { kind: 'new_issue', author: 'ava', participants: ['ava'] },
    expected: [],
  },
  {
    title: 'R05 global watch, group disabled, project global',
    settings: [
      { user: 'gina', on: 'global', level: 'watch' },
      { user: 'gina', on: group, level: 'disabled' },
      { user: 'gina', on: widgets, level: 'global' },
    ],
    event: { kind: 'new_issue', author: 'ava', participants: ['ava'] },
    expected: [],
  },
  {
    title: 'R06 global disabled, group watch',
    settings: [
      { user: 'gina', on: 'global', level: 'disabled' },
      { user: 'gina', on: group, level: 'watch' },
    ],
    event: { kind: 'new_merge_request', author: 'ava', participants: ['ava'] },
    expected: [['gina', W]],
  },
  {
    title: 'R07 group watch, project participating',
    settings: [
      { user: 'gina', on: group, level: 'watch' },
      { user: 'gina', on: widgets, level: 'participating' },
    ],
    event: { kind: 'new_issue', author: 'ava', participants: ['ava'] },
    expected: [],
  },
  {
    title: 'R08 group custom new_issue on, project global',
    settings: [
      { user: 'gina', on: group, level: 'custom', events: ['new_issue'] },
      { user: 'gina', on: widgets, level: 'global' },
    ],
    event: { kind: 'new_issue', author: 'ava', participants: ['ava'] },
    expected: [['gina', C]],
  },
  {
    title: 'R09 group custom new_issue on, close_issue off',
    settings: [
      { user: 'gina', on: group, level: 'custom', events: ['new_issue'] },
      { user: 'gina', on: widgets, level: 'global' },
    ],
    event: { kind: 'close_issue', author: 'ava', participants: ['ava'] },
    expected: [],
  },
  {
    title: 'R10 global custom, project member',
    settings: [{ user: 'pat', on: 'global', level: 'custom', events: ['reopen_issue'] }],
    event: { kind: 'reopen_issue', author: 'ava', participants: ['ava'] },
    expected: [['pat', C]],
  },

  // Custom with the event off: still mailed as a participant, not otherwise.
  {
    title: 'R11 custom event off but participating',
    settings: [
      { user: 'pat', on: widgets, level: 'custom', events: allEvents.filter((e) => e !== 'close_issue') },
      { user: 'gina', on: widgets, level: 'custom', events: allEvents.filter((e) => e !== 'close_issue') },
    ],
    event: { kind: 'close_issue', author: 'ava', participants: ['ava', 'pat'] },
    expected: [['pat', P]],
  },

  // The `mention` level: mentions on mention-type events only.
  { title: 'R12 mention level, mentioned on new_issue', settings: [{ user: 'mona', on: widgets, level: 'mention' }], event: { kind: 'new_issue', author: 'ava', participants: ['ava'], mentioned: ['mona'] }, expected: [['mona', M]] },
  { title: 'R13 mention level, mentioned on close_issue', settings: [{ user: 'mona', on: widgets, level: 'mention' }], event: { kind: 'close_issue', author: 'ava', participants: ['ava'], mentioned: ['mona'] }, expected: [] },
  { title: 'R14 mention level, participant on new_note', settings: [{ user: 'mona', on: widgets, level: 'mention' }], event: { kind: 'new_note', author: 'ava', participants: ['ava', 'mona'] }, expected: [] },
  { title: 'R15 mention level, reassigned', settings: [{ user: 'mona', on: widgets, level: 'mention' }], event: { kind: 'reassign_issue', author: 'ava', participants: ['ava'], mentioned: ['mona'] }, expected: [['mona', M]] },
  { title: 'R16 participating level, mentioned on merge', settings: [], event: { kind: 'merge_merge_request', author: 'ava', participants: ['ava'], mentioned: ['mona'] }, expected: [['mona', P]] },
  { title: 'R17 participating level, mentioned on new_note', settings: [], event: { kind: 'new_note', author: 'ava', participants: ['ava'], mentioned: ['mona'] }, expected: [['mona', M]] },

  // Pipelines: the pipeline's user alone; success only through a custom setting.
  {
    title: 'R18 success_pipeline, watchers',
    settings: [
      { user: 'pia', on: 'global', level: 'watch' },
      { user: 'gina', on: group, level: 'watch' },
    ],
    event: { kind: 'success_pipeline', author: 'ava', pipeline_user: 'pia' },
    expected: [],
  },
  { title: 'R19 success_pipeline, pipeline user participating', settings: [], event: { kind: 'success_pipeline', author: 'ava', pipeline_user: 'pia' }, expected: [] },
  {
    title: 'R20 success_pipeline, custom with it on',
    settings: [
      { user: 'pia', on: widgets, level: 'custom', events: ['success_pipeline'] },
      { user: 'gina', on: group, level: 'watch' },
      { user: 'walt', on: group, level: 'custom', events: ['success_pipeline'] },
    ],
    event: { kind: 'success_pipeline', author: 'ava', pipeline_user: 'pia' },
    expected: [['pia', C]],
  },
  {
    title: 'R21 failed_pipeline, pipeline user participating',
    settings: [{ user: 'gina', on: group, level: 'watch' }],
    event: { kind: 'failed_pipeline', author: 'ava', pipeline_user: 'pia' },
    expected: [['pia', P]],
  },
  { title: 'R22 failed_pipeline, pipeline user watching', settings: [{ user: 'pia', on: 'global', level: 'watch' }], event: { kind: 'failed_pipeline', author: 'ava', pipeline_user: 'pia' }, expected: [['pia', P]] },
  { title: 'R23 failed_pipeline, pipeline user disabled', settings: [{ user: 'pia', on: widgets, level: 'disabled' }], event: { kind: 'failed_pipeline', author: 'ava', pipeline_user: 'pia' }, expected: [] },
  { title: 'R24 failed_pipeline, pipeline user on mention', settings: [{ user: 'pia', on: widgets, level: 'mention' }], event: { kind: 'failed_pipeline', author: 'ava', pipeline_user: 'pia' }, expected: [] },
  { title: 'R25 failed_pipeline, custom with it off', settings: [{ user: 'pia', on: widgets, level: 'custom', events: ['success_pipeline'] }], event: { kind: 'failed_pipeline', author: 'ava', pipeline_user: 'pia' }, expected: [] },

  // The author: never mailed about their own action, except a pipeline of their own.
  {
    title: 'R26 author participating, watching and mentioned',
    settings: [{ user: 'ava', on: 'global', level: 'watch' }],
    event: { kind: 'new_issue', author: 'ava', participants: ['ava', 'pat'], mentioned: ['ava'] },
    expected: [['pat', P]],
  },
  { title: 'R27 failed_pipeline, author is pipeline user', settings: [], event: { kind: 'failed_pipeline', author: 'ava' }, expected: [['ava', P]] },

  // Users who cannot see the project.
  {
    title: 'R28 non-member mentioned on private project',
    settings: [{ user: 'nick', on: 'global', level: 'watch' }],
    event: { kind: 'new_issue', author: 'ava', participants: ['ava', 'pat', 'nick'], mentioned: ['nick'] },
    expected: [['pat', P]],
  },
  { title: 'R29 non-member mentioned on public project', settings: [], project: 'ava/site', event: { kind: 'new_issue', author: 'ava', participants: ['ava'], mentioned: ['nick'] }, expected: [['nick', M]] },
  // A global watcher is a watcher of the projects they are a member of, or have a setting on (even `global`, which
  // GitLab's project_watchers counts); olga has none on ava/site before R31.
  { title: 'R30 outsider global watch only', settings: [{ user: 'olga', on: 'global', level: 'watch' }], project: 'ava/site', event: { kind: 'new_note', author: 'ava', participants: ['ava'] }, expected: [] },
  { title: 'R31 outsider watching public project', settings: [{ user: 'olga', on: 'project ava/site', level: 'watch' }], project: 'ava/site', event: { kind: 'new_note', author: 'ava', participants: ['ava'] }, expected: [['olga', W]] },
  {
    title: 'R31b outsider global watch, project setting global',
    settings: [
      { user: 'olga', on: 'project ava/site', level: 'global' },
      { user: 'olga', on: 'global', level: 'watch' },
    ],
    project: 'ava/site',
    event: { kind: 'new_note', author: 'ava', participants: ['ava'] },
    expected: [['olga', W]],
  },

  // The notification e-mail of the global setting.
  {
    title: 'R32 notification email on the global setting',
    settings: [{ user: 'emma', on: 'global', level: 'participating', notification_email: 'emma@home.example' }],
    event: { kind: 'new_note', author: 'ava', participants: ['ava', 'emma'] },
    expected: [['emma', P]],
    addresses: { emma: 'emma@home.example' },
  },
  {
    title: 'R33 notification email with a project watch',
    settings: [
      { user: 'emma', on: 'global', level: 'participating', notification_email: 'emma@home.example' },
      { user: 'emma', on: widgets, level: 'watch' },
    ],
    event: { kind: 'close_merge_request', author: 'ava', participants: ['ava'] },
    expected: [['emma', W]],
    addresses: { emma: 'emma@home.example' },
  },

  // Several at once: one message each, the most specific reason when a user is reached several ways.
  {
    title: 'R34 several recipients at once',
    settings: [
      { user: 'mona', on: widgets, level: 'mention' },
      { user: 'gina', on: group, level: 'watch' },
      { user: 'walt', on: group, level: 'watch' },
      { user: 'pat', on: widgets, level: 'watch' },
      { user: 'pia', on: widgets, level: 'custom', events: ['new_note'] },
      { user: 'emma', on: widgets, level: 'disabled' },
    ],
    event: { kind: 'new_note', author: 'ava', participants: ['ava', 'pat', 'emma'], mentioned: ['mona', 'nick', 'gina'] },
    expected: [
      ['pat', P],
      ['gina', M],
      ['walt', W],
      ['mona', M],
      ['pia', C],
    ],
  },
];

let server: TestServer;
let smtp: TestSmtpServer;
let delivery: MailDelivery;

beforeAll(async () => {
  [server, smtp] = await Promise.all([startTestServer({ seed: recipientsSeed, testHelpers: true }), startSmtpServer()]);
  delivery = startMailDelivery(server.storage.mail, smtpTransport(smtp.url, 'tokenbell@example.com'), { pollMs: 25, backoffSeconds: 1 });
});
afterAll(async () => {
  await delivery?.stop();
  await Promise.all([server?.close(), smtp?.close()]);
});

const api = (path: string, token: string, init: RequestInit = {}) => {
  const headers = new Headers(init.headers);
  headers.set('PRIVATE-TOKEN', token);
  return fetch(`${server.baseUrl}/api/v3${path}`, { ...init, headers });
};

const settingPath = (on: Setting['on']) =>
  on === 'global' ? '/notification_settings' : on === group ? '/groups/acme/notification_settings' : `/projects/${encodeURIComponent(on.slice('project '.length))}/notification_settings`;

async function put(setting: Setting) {
  const body: Record<string, unknown> = { level: setting.level };
  if (setting.level === 'custom') for (const e of allEvents) body[e] = setting.events?.includes(e) ?? false;
  if (setting.notification_email !== undefined) body.notification_email = setting.notification_email;
  const response = await api(settingPath(setting.on), patOf(setting.user), json('PUT', body));
  const answer = await response.json();
  expect(response.status, `${setting.user} PUT ${setting.on} ${JSON.stringify(body)}: ${JSON.stringify(answer)}`).toBe(200);
  expect(answer.level).toBe(setting.level);
}

/** Back to nothing chosen: `participating` globally (the default), `global` (inherit) on a group or project. */
const undo = (setting: Setting) => put({ user: setting.user, on: setting.on, level: setting.on === 'global' ? 'participating' : 'global' });

const subjectOf = (row: Row) => `${row.project ?? 'acme/widgets'} | ${row.title} (${row.event.kind})`;
const receivedFor = (row: Row) => smtp.received().filter((m) => m.headers.subject === subjectOf(row));
const mailed = (messages: ReceivedMessage[]) => messages.map((m) => ({ to: m.to, reason: m.headers['x-gitlab-notificationreason'] }));

async function until<T>(what: string, probe: () => Promise<T> | T, done: (value: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('recipients of an event, through the API and the SMTP server', () => {
  it('the rows have unique titles', () => {
    expect(new Set(rows.map((r) => r.title)).size).toBe(rows.length);
  });

  for (const row of rows) {
    it(`${row.title}: ${row.expected.map(([u, r]) => `${u} (${r})`).join(', ') || 'nobody'}`, async () => {
      for (const setting of row.settings) await put(setting);
      try {
        const response = await api(`/test_helpers/projects/${encodeURIComponent(row.project ?? 'acme/widgets')}/notification_events`, patOf('root'), json('POST', { title: row.title, ...row.event }));
        const event = await response.json();
        expect(response.status, JSON.stringify(event)).toBe(201);
        const addressOf = (u: Username) => row.addresses?.[u] ?? `${u}@example.com`;
        const byName = <T extends { username: string }>(list: T[]) => [...list].sort((a, b) => a.username.localeCompare(b.username));
        const expected = byName(row.expected.map(([username, reason]) => ({ username, email: addressOf(username), reason })));
        expect(byName(event.recipients.map(({ username, email, reason }: { username: string; email: string; reason: string }) => ({ username, email, reason })))).toEqual(expected);

        // Every message of the event delivered, then exactly those at the SMTP server: one per recipient, to their
        // address, with the reason in its header.
        delivery.kick();
        const listed = await until(
          'the event\'s mail to be sent',
          async () => (await (await api(`/test_helpers/notification_messages?event_id=${event.id}&per_page=100`, patOf('root'))).json()) as Array<{ status: string }>,
          (messages) => messages.every((m) => m.status === 'sent'),
        );
        expect(listed).toHaveLength(expected.length);
        const received = await until('the SMTP server to receive the event\'s mail', () => receivedFor(row), (messages) => messages.length >= expected.length);
        const byTo = (list: Array<{ to: string[]; reason: string | undefined }>) => [...list].sort((a, b) => a.to[0]!.localeCompare(b.to[0]!));
        expect(byTo(mailed(received))).toEqual(byTo(expected.map((r) => ({ to: [r.email], reason: r.reason }))));
      } finally {
        for (const setting of [...row.settings].reverse()) await undo(setting);
      }
    });
  }

  it('the SMTP server received nothing but the rows\' messages', async () => {
    const total = rows.reduce((n, r) => n + r.expected.length, 0);
    // Give a stray message time to arrive.
    delivery.kick();
    await new Promise((r) => setTimeout(r, 200));
    const received = smtp.received();
    expect(received.filter((m) => !rows.some((r) => m.headers.subject === subjectOf(r))).map((m) => m.headers.subject)).toEqual([]);
    expect(received).toHaveLength(total);
  });
});

describe('settings the rows depend on', () => {
  it('a notification e-mail must be one of the user\'s own addresses', async () => {
    const response = await api('/notification_settings', patOf('emma'), json('PUT', { notification_email: 'pat@example.com' }));
    expect(response.status).toBe(400);
    expect((await (await api('/notification_settings', patOf('emma'))).json()).notification_email).not.toBe('pat@example.com');
  });

  it('nick cannot set a level on the private project he cannot see', async () => {
    expect((await api('/projects/acme%2Fwidgets/notification_settings', patOf('nick'), json('PUT', { level: 'watch' }))).status).toBe(404);
  });
});
