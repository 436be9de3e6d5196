// Notification mail (domain/storage/mail.ts) in the file store's `notification_events` and `outbox` collections. An
// event and its messages are recorded in one commit, all or none; a claim sets its lease in one, so no other claim
// takes those messages until it runs out.
import type { MailStorage } from '../../domain/storage/index.js';
import type { OutboxMessageRecord } from './schema.js';
import type { Store } from './store.js';

export function fileMailStorage(store: Store): MailStorage {
  return {
    async recordEvent(event, messages) {
      await store.commit(() => {
        store.insert('notification_events', event);
        for (const message of messages) store.insert('outbox', { ...message, status: 'queued', attempts: 0, claimed_until: null, last_error: null, sent_at: null });
      });
    },
    claimDue(now, limit, leaseSeconds) {
      return store.commit(() => {
        const due = store.data.outbox.filter((m) => m.status === 'queued' && m.next_attempt_at <= now && (m.claimed_until === null || m.claimed_until < now)).slice(0, limit);
        return due.map((m) => store.update('outbox', m, { claimed_until: now + leaseSeconds, attempts: m.attempts + 1 }));
      });
    },
    async markSent(id, now) {
      await store.commit(() => {
        const m = store.lookup('outbox', 'id', id);
        if (m) store.update('outbox', m, { status: 'sent', sent_at: now, claimed_until: null, last_error: null });
      });
    },
    async markRetry(id, nextAttemptAt, error) {
      await store.commit(() => {
        const m = store.lookup('outbox', 'id', id);
        if (m) store.update('outbox', m, { next_attempt_at: nextAttemptAt, claimed_until: null, last_error: error });
      });
    },
    async markFailed(id, error) {
      await store.commit(() => {
        const m = store.lookup('outbox', 'id', id);
        if (m) store.update('outbox', m, { status: 'failed', claimed_until: null, last_error: error });
      });
    },
    async recent({ limit, userId, eventId }) {
      const found: OutboxMessageRecord[] = [];
      const { outbox } = store.data;
      for (let i = outbox.length - 1; i >= 0 && found.length < limit; i--) {
        const message = outbox[i]!;
        if ((userId === undefined || message.user_id === userId) && (eventId === undefined || message.event_id === eventId)) found.push(message);
      }
      return found;
    },
    async summary() {
      const summary = { queued: 0, sent: 0, failed: 0, oldestQueuedAt: null as number | null };
      for (const message of store.data.outbox) {
        summary[message.status]++;
        if (message.status === 'queued' && (summary.oldestQueuedAt === null || message.created_at < summary.oldestQueuedAt)) summary.oldestQueuedAt = message.created_at;
      }
      return summary;
    },
  };
}
