// What the domain asks of the outbox.
import type { EpochSeconds, NotificationEventRecord, OutboxMessageRecord } from './records.js';

/** How many messages the outbox holds by status, and since when the oldest still queued has waited. */
export interface OutboxSummary {
  queued: number;
  sent: number;
  failed: number;
  /** When the oldest queued message was queued; null when none is. */
  oldestQueuedAt: EpochSeconds | null;
}

export type NewOutboxMessage = Omit<OutboxMessageRecord, 'status' | 'attempts' | 'claimed_until' | 'last_error' | 'sent_at'>;

/** The outbox: an event and its mails written together, then delivered by workers that claim each mail in turn. */
export interface MailStorage {
  /** The event and its messages, in one write: all of it or none. */
  recordEvent(event: NotificationEventRecord, messages: readonly NewOutboxMessage[]): Promise<void>;
  /**
   * Claims up to `limit` queued messages due at `now`, for `leaseSeconds`: no other worker (on a database, no other
   * instance) gets them until they are marked or the claim runs out. Counts the attempt.
   */
  claimDue(now: EpochSeconds, limit: number, leaseSeconds: number): Promise<OutboxMessageRecord[]>;
  markSent(id: string, now: EpochSeconds): Promise<void>;
  /** Queued again for `nextAttemptAt`, with why this attempt failed. */
  markRetry(id: string, nextAttemptAt: EpochSeconds, error: string): Promise<void>;
  markFailed(id: string, error: string): Promise<void>;
  /** The newest messages first, at most `limit`; only those to `userId`, or of `eventId`, when given. */
  recent(query: { limit: number; userId?: number; eventId?: string }): Promise<OutboxMessageRecord[]>;
  /** The outbox as an operator watches it (the metrics); sent and failed messages count until pruned. */
  summary(): Promise<OutboxSummary>;
}
