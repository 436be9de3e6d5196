// Notification mail (spec section 6): an event's recipients, chosen by recipients.ts from the project's audience,
// each get one message, written to the outbox in the same write as the event, so an acknowledged event never loses
// its mail. Headers follow the service's, so people can filter: a Message-ID, a List-Id per project, and the reason
// the recipient was chosen (X-GitLab-NotificationReason).
import { nanoid } from 'nanoid';
import type { NotificationEventRecord } from '../store/schema.js';
import type { NewOutboxMessage, Storage } from '../store/storage.js';
import { recipientsAmong, type NotifiableEvent, type Recipient } from './recipients.js';
import { epochSeconds } from './time.js';
import { projectFullPath } from './visibility.js';

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
