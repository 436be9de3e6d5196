// `tokenbell events emit|messages`: the test-helper API from a shell, against a running instance started with
// --test-helpers (so its delivery worker sends the mail), as an administrator's personal access token.
import { parseArgs } from 'node:util';
import type { components } from '@tokenbell/sdk';
import { ConfigError } from './config.js';
import { ExplainedError } from './explained-error.js';
import { notificationEvents } from './openapi/document.js';

type Schemas = components['schemas'];

export const eventsUsage = `Usage: tokenbell events <command> --url URL --token TOKEN ...

  emit --project ID_OR_PATH --kind KIND --title TITLE --author USERNAME
       [--participants U1,U2] [--mentioned U1,U2] [--pipeline-user USERNAME]
                        record a notification event on a project; prints who is mailed and why
  messages [--username U] [--event-id ID] [--per-page N]
                        the mail queued, newest first, with its delivery status

  --url URL             the instance (TOKENBELL_URL, default http://127.0.0.1:3000), started with --test-helpers
  --token TOKEN         an administrator's personal access token (TOKENBELL_TOKEN); tokenbell users token makes one
  KIND                  ${notificationEvents.join(', ')}
`;

class RemoteError extends ExplainedError {}

const list = (value: string | undefined) => (value === undefined ? undefined : value.split(',').map((s) => s.trim()).filter((s) => s !== ''));

export async function runEventsCommand(args: string[], env: NodeJS.ProcessEnv, print: (line: string) => void): Promise<void> {
  const [command, ...rest] = args;
  if (command === undefined || command === '--help' || command === '-h') return print(eventsUsage);
  if (command !== 'emit' && command !== 'messages') throw new ConfigError(`unknown events command "${command}"\n\n${eventsUsage}`);
  const { values } = parseArgs({
    args: rest,
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      project: { type: 'string' },
      kind: { type: 'string' },
      title: { type: 'string' },
      author: { type: 'string' },
      participants: { type: 'string' },
      mentioned: { type: 'string' },
      'pipeline-user': { type: 'string' },
      username: { type: 'string' },
      'event-id': { type: 'string' },
      'per-page': { type: 'string' },
    },
    strict: true,
  });
  const base = (values.url ?? env.TOKENBELL_URL ?? 'http://127.0.0.1:3000').replace(/\/+$/, '');
  const token = values.token ?? env.TOKENBELL_TOKEN;
  if (!token) throw new ConfigError(`events ${command} needs --token (or TOKENBELL_TOKEN): an administrator's personal access token`);
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    let response: Response;
    try {
      response = await fetch(`${base}/api/v3/test_helpers${path}`, {
        method,
        headers: { 'PRIVATE-TOKEN': token, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new RemoteError(`cannot reach ${base} (--url): ${(error as Error & { cause?: Error }).cause?.message ?? (error as Error).message}`);
    }
    const text = await response.text();
    if (!response.ok) {
      const message = (() => {
        try {
          return (JSON.parse(text) as { message?: string }).message ?? text;
        } catch {
          return text;
        }
      })();
      const hint = response.status === 404 && path === '/notification_messages' ? ' (is the server running with --test-helpers?)' : '';
      throw new RemoteError(`${base}: ${message}${hint}`);
    }
    return JSON.parse(text) as T;
  };

  if (command === 'emit') {
    const need = (flag: 'project' | 'kind' | 'title' | 'author'): string => {
      const value = values[flag];
      if (value === undefined) throw new ConfigError(`events emit needs --${flag}`);
      return value;
    };
    const request = {
      kind: need('kind') as Schemas['NotificationEvent'],
      title: need('title'),
      author: need('author'),
      ...(values.participants !== undefined ? { participants: list(values.participants) } : {}),
      ...(values.mentioned !== undefined ? { mentioned: list(values.mentioned) } : {}),
      ...(values['pipeline-user'] !== undefined ? { pipeline_user: values['pipeline-user'] } : {}),
    };
    const result = await call<Schemas['NotificationEventResult']>('POST', `/projects/${encodeURIComponent(need('project'))}/notification_events`, request);
    print(`recorded ${result.kind} event ${result.id} on project ${result.project_id}; ${result.recipients.length === 0 ? 'nobody is mailed' : 'mailing:'}`);
    for (const r of result.recipients) print(`  ${r.username} <${r.email}> (${r.reason})`);
    return;
  }
  const query = new URLSearchParams();
  if (values.username !== undefined) query.set('username', values.username);
  if (values['event-id'] !== undefined) query.set('event_id', values['event-id']);
  if (values['per-page'] !== undefined) query.set('per_page', values['per-page']);
  const messages = await call<Schemas['NotificationMessage'][]>('GET', `/notification_messages${query.size ? `?${query}` : ''}`);
  if (messages.length === 0) print('no messages');
  for (const m of messages) print(`${m.created_at}  ${m.status.padEnd(6)}  ${m.to}  ${m.subject}${m.last_error ? `  (${m.last_error})` : ''}`);
}
