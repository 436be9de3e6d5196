// Notification mail (spec section 6): an event's recipients, chosen by recipients.ts from the project's audience,
// each get one message, written to the outbox in the same write as the event, so an acknowledged event never loses
// its mail. Headers follow the service's, so people can filter: a Message-ID, a List-Id per project, and the reason
// the recipient was chosen (X-GitLab-NotificationReason).
import { nanoid } from 'nanoid';
import type { components } from '@tokenbell/sdk';
import { InputError } from '../explained-error.js';
import type { NotificationEventRecord, OutboxMessageRecord, UserRecord } from './storage/records.js';
import type { NewOutboxMessage, Project, Storage } from './storage/index.js';
import { isPipelineEvent, recipientsAmong, type NotifiableEvent, type Recipient } from './recipients.js';
import { epochSeconds, isoOf } from './time.js';
import { canSeeProjectWith, projectFullPath } from './visibility.js';

type Schemas = components['schemas'];

export interface NotificationToRecord extends NotifiableEvent {
  title: string;
}

const reasonText: Record<Recipient['reason'], string> = {
  participating: 'you are participating',
  mentioned: 'you were mentioned',
  watching: 'you are watching the project',
  custom: 'you switched this event on in a custom notification setting',
};

/**
 * Records the event and one queued message per recipient; answers the event and its recipients. Throws RangeError for
 * an unknown project or event kind, recording nothing.
 */
export async function recordNotification(
  storage: Pick<Storage, 'recipients' | 'mail'>,
  event: NotificationToRecord,
  { host, now = epochSeconds() }: { host: string; now?: number },
): Promise<{ event: NotificationEventRecord; recipients: Recipient[] }> {
  const audience = await storage.recipients.audience(event.project_id, [event.author_id, ...event.participants, ...event.mentioned]);
  if (!audience) throw new RangeError(`unknown project: ${event.project_id}`);
  const recipients = recipientsAmong(audience, event);
  const record: NotificationEventRecord = { id: nanoid(), kind: event.kind, project_id: event.project_id, author_id: event.author_id, title: event.title, created_at: now };
  const path = projectFullPath(audience.project);
  const messages = recipients.map((r): NewOutboxMessage => {
    const id = nanoid();
    return {
      id,
      event_id: record.id,
      user_id: r.user_id,
      to: r.email,
      subject: `${path} | ${event.title} (${event.kind})`,
      text: `${event.kind.replaceAll('_', ' ')} in ${path}: ${event.title}\n\nYou are receiving this because ${reasonText[r.reason]}.\n`,
      headers: {
        'Message-ID': `<${record.id}.${id}@${host}>`,
        'List-Id': `${path} <${audience.project.id}.${path.replaceAll('/', '.')}.${host}>`,
        'X-GitLab-Project': path,
        'X-GitLab-NotificationReason': r.reason,
        'Auto-Submitted': 'auto-generated',
      },
      next_attempt_at: now,
      created_at: now,
    };
  });
  await storage.mail.recordEvent(record, messages);
  return { event: record, recipients };
}

/**
 * The test helpers' way in (the service's issues, merge requests and pipelines are outside this API): users named by
 * username, checked, then recorded as recordNotification does. Throws InputError, recording nothing, for an unknown
 * user, a pipeline user on another kind of event, or an author who may not see the project.
 */
export async function emitNotificationEvent(
  storage: Pick<Storage, 'users' | 'namespaces' | 'recipients' | 'mail'>,
  project: Project,
  request: Schemas['NotificationEventRequest'],
  options: { host: string; now?: number },
): Promise<Schemas['NotificationEventResult']> {
  const pipeline = isPipelineEvent(request.kind);
  if (request.pipeline_user !== undefined && !pipeline) throw new InputError('pipeline_user', 'is only for failed_pipeline and success_pipeline events');
  // Pipeline mail goes to the pipeline's user alone: names that would be ignored are refused instead.
  for (const field of ['participants', 'mentioned'] as const) {
    if (pipeline && (request[field]?.length ?? 0) > 0) throw new InputError(field, `are not for pipeline events, whose mail goes to the pipeline's user (pipeline_user) only`);
  }
  const found = new Map<string, UserRecord>();
  const userNamed = async (field: string, name: string) => {
    const user = found.get(name.toLowerCase()) ?? (await storage.users.byUsername(name));
    if (!user) throw new InputError(field, `${field === 'participants' || field === 'mentioned' ? 'must name existing users' : 'must name an existing user'}: there is no user "${name}"`, 'unknown');
    found.set(name.toLowerCase(), user);
    return user;
  };
  const author = await userNamed('author', request.author);
  const participants = [];
  for (const name of request.participants ?? []) participants.push(await userNamed('participants', name));
  const mentioned = [];
  for (const name of request.mentioned ?? []) mentioned.push(await userNamed('mentioned', name));
  const pipelineUser = request.pipeline_user === undefined ? author : await userNamed('pipeline_user', request.pipeline_user);
  // Someone who cannot open the project cannot act on it; named users who cannot are simply not mailed.
  if (!canSeeProjectWith(author, project, await storage.namespaces.projectAccess(author.id, project))) {
    throw new InputError('author', `${author.username} may not see ${projectFullPath(project)}`);
  }
  const ids = (users: UserRecord[]) => users.map((u) => u.id);
  const { event, recipients } = await recordNotification(
    storage,
    {
      kind: request.kind,
      project_id: project.id,
      author_id: author.id,
      // NotificationService#pipeline_finished mails the pipeline's user, and only them.
      participants: pipeline ? [pipelineUser.id] : ids(participants),
      mentioned: pipeline ? [] : ids(mentioned),
      title: request.title,
    },
    options,
  );
  return {
    id: event.id,
    kind: event.kind,
    project_id: event.project_id,
    title: event.title,
    author: author.username,
    created_at: isoOf(event.created_at),
    recipients: recipients.map(({ user_id, username, email, reason }) => ({ user_id, username, email, reason })),
  };
}

/** The mail queued, newest first, as the test helpers list it. Throws InputError for an unknown username. */
export async function listNotificationMessages(
  storage: Pick<Storage, 'users' | 'mail'>,
  query: { username?: string; event_id?: string; per_page?: number },
): Promise<Schemas['NotificationMessage'][]> {
  let userId: number | undefined;
  if (query.username !== undefined) {
    // A typo in a test's filter must not read as "nobody was mailed".
    const user = await storage.users.byUsername(query.username);
    if (!user) throw new InputError('username', `must name an existing user: there is no user "${query.username}"`, 'unknown');
    userId = user.id;
  }
  const messages = await storage.mail.recent({ limit: query.per_page ?? 20, userId, eventId: query.event_id });
  const usernames = new Map<number, string>();
  for (const id of new Set(messages.map((m) => m.user_id))) usernames.set(id, (await storage.users.byId(id))?.username ?? '');
  return messages.map((m) => presentMessage(m, usernames.get(m.user_id)!));
}

function presentMessage(message: OutboxMessageRecord, username: string): Schemas['NotificationMessage'] {
  return {
    id: message.id,
    event_id: message.event_id,
    user_id: message.user_id,
    username,
    to: message.to,
    subject: message.subject,
    reason: message.headers['X-GitLab-NotificationReason'] as Schemas['NotificationReason'],
    headers: { ...message.headers },
    status: message.status,
    attempts: message.attempts,
    last_error: message.last_error,
    created_at: isoOf(message.created_at),
    sent_at: message.sent_at === null ? null : isoOf(message.sent_at),
  };
}
