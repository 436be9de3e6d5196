// `tokenbell events emit|messages`: two operations of the test-helper API from a shell, with flags of their own and
// answers printed for a person, against a running instance started with --test-helpers (so its delivery worker sends
// the mail), as an administrator's personal access token. The call itself is `tokenbell test-helpers`'s.
import type { components } from '@tokenbell/sdk';
import { notificationEvents } from '../openapi/document.js';
import { parseFlags, required, subcommand } from '../flags.js';
import { callTestHelper, testHelperRemote } from './test-helpers.js';

type Schemas = components['schemas'];

export const eventsUsage = `Usage: tokenbell events <command> --url URL --token-file FILE ...

  emit --project ID_OR_PATH --kind KIND --title TITLE --author USERNAME
       [--participants U1,U2] [--mentioned U1,U2] [--pipeline-user USERNAME]
                        record a notification event on a project; prints who is mailed and why
  messages [--username U] [--event-id ID] [--per-page N]
                        the mail queued, newest first, with its delivery status

  --url URL             the instance (TOKENBELL_URL, default http://127.0.0.1:3000), started with --test-helpers
  --token-file FILE     a file holding an administrator's personal access token (- for standard input), else
                        TOKENBELL_TEST_HELPERS_TOKEN; tokenbell users token makes one (--token TOKEN works, but other users of
                        the machine can read it)
  KIND                  ${notificationEvents.join(', ')}
`;

const list = (value: string | undefined) => (value === undefined ? undefined : value.split(',').map((s) => s.trim()).filter((s) => s !== ''));

export async function runEventsCommand(args: string[], env: NodeJS.ProcessEnv, print: (line: string) => void): Promise<void> {
  const chosen = subcommand(args, 'events', ['emit', 'messages'], eventsUsage, print);
  if (!chosen) return;
  const { command, rest } = chosen;
  const { values } = parseFlags(rest, { url: 'string', token: 'string', 'token-file': 'string', project: 'string', kind: 'string', title: 'string', author: 'string', participants: 'string', mentioned: 'string', 'pipeline-user': 'string', username: 'string', 'event-id': 'string', 'per-page': 'string' });
  const remote = await testHelperRemote(values, env, `events ${command}`);

  if (command === 'emit') {
    const need = required(values, 'events emit');
    const request = {
      kind: need('kind') as Schemas['NotificationEvent'],
      title: need('title'),
      author: need('author'),
      ...(values.participants !== undefined ? { participants: list(values.participants) } : {}),
      ...(values.mentioned !== undefined ? { mentioned: list(values.mentioned) } : {}),
      ...(values['pipeline-user'] !== undefined ? { pipeline_user: values['pipeline-user'] } : {}),
    };
    const result = await callTestHelper<Schemas['NotificationEventResult']>(remote, 'emitNotificationEvent', { path: { id: need('project') }, body: request });
    print(`recorded ${result.kind} event ${result.id} on project ${result.project_id}; ${result.recipients.length === 0 ? 'nobody is mailed' : 'mailing:'}`);
    for (const r of result.recipients) print(`  ${r.username} <${r.email}> (${r.reason})`);
    return;
  }
  const query = Object.fromEntries(
    Object.entries({ username: values.username, event_id: values['event-id'], per_page: values['per-page'] }).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const messages = await callTestHelper<Schemas['NotificationMessage'][]>(remote, 'listNotificationMessages', { query });
  if (messages.length === 0) print('no messages');
  for (const m of messages) print(`${m.created_at}  ${m.status.padEnd(6)}  ${m.to}  ${m.subject}${m.last_error ? `  (${m.last_error})` : ''}`);
}
