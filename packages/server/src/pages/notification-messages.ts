// The administrators' mail page: the notification mail this instance queued, newest first, with where each message
// stands (queued, sent, failed) and why, like the service's development mail viewer.
import type { components } from '@tokenbell/sdk';
import type { UserRecord } from '../domain/storage/records.js';
import { html } from './html.js';
import { listTable, signedInPage } from './frame.js';

type NotificationMessage = components['schemas']['NotificationMessage'];

const statusText = (m: NotificationMessage) => {
  if (m.status === 'sent') return 'Sent';
  if (m.status === 'failed') return `Failed: ${m.last_error ?? ''}`;
  return m.last_error ? `Queued (${m.attempts} attempt${m.attempts === 1 ? '' : 's'}; last: ${m.last_error})` : 'Queued';
};

export function notificationMessagesPage(user: UserRecord, csrf: string, messages: readonly NotificationMessage[]): string {
  return signedInPage(
    'Notification mail',
    user,
    csrf,
    html`<h1>Notification mail</h1>
<p>The newest ${messages.length === 1 ? 'message' : `${messages.length} messages`} this instance queued, and where each stands.</p>
${
  messages.length === 0
    ? html`<p>No notification mail yet.</p>`
    : listTable(
        ['Subject', 'To', 'Why', 'Queued', 'Status'],
        messages.map((m) => ({
          name: m.subject,
          cells: [html`${m.username} &lt;${m.to}&gt;`, m.reason, html`<time datetime="${m.created_at}">${m.created_at.replace('T', ' ').slice(0, 19)}</time>`, statusText(m)],
        })),
      )
}`,
  );
}
