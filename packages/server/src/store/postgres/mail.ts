// The outbox (domain/storage/mail.ts) on PostgreSQL: an event and its mails go in one transaction, and the instances
// on the database share the delivery, each claiming due mails the others have not (FOR UPDATE SKIP LOCKED).
import type pg from 'pg';
import type { MailStorage, OutboxMessageRecord } from '../../domain/storage/index.js';
import { at, type Bigint, epoch, isId, type Timestamp } from './rows.js';
import type { Writes } from './writes.js';

interface OutboxRow {
  id: string;
  event_id: string;
  user_id: string;
  recipient: string;
  subject: string;
  body: string;
  headers: Record<string, string>;
  status: OutboxMessageRecord['status'];
  attempts: number;
  next_attempt_at: Date;
  claimed_until: Date | null;
  last_error: string | null;
  created_at: Date;
  sent_at: Date | null;
}
const outboxColumns = 'id, event_id, user_id, recipient, subject, body, headers, status, attempts, next_attempt_at, claimed_until, last_error, created_at, sent_at';
const outboxOf = (row: OutboxRow): OutboxMessageRecord => ({
  id: row.id,
  event_id: row.event_id,
  user_id: Number(row.user_id),
  to: row.recipient,
  subject: row.subject,
  text: row.body,
  headers: row.headers,
  status: row.status,
  attempts: row.attempts,
  next_attempt_at: epoch(row.next_attempt_at),
  claimed_until: row.claimed_until === null ? null : epoch(row.claimed_until),
  last_error: row.last_error,
  created_at: epoch(row.created_at),
  sent_at: row.sent_at === null ? null : epoch(row.sent_at),
});

export function postgresMailStorage(pool: pg.Pool, { inTransaction, write }: Writes): MailStorage {
  return {
    async recordEvent(event, messages) {
      await inTransaction(async (client) => {
        await client.query('INSERT INTO notification_events (id, kind, project_id, author_id, title, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
          event.id,
          event.kind,
          event.project_id,
          event.author_id,
          event.title,
          at(event.created_at),
        ]);
        for (const m of messages) {
          await client.query(
            `INSERT INTO outbox_messages (id, event_id, user_id, recipient, subject, body, headers, next_attempt_at, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
            [m.id, m.event_id, m.user_id, m.to, m.subject, m.text, JSON.stringify(m.headers), at(m.next_attempt_at), at(m.created_at)],
          );
        }
      });
    },
    async claimDue(now, limit, leaseSeconds) {
      // SKIP LOCKED: instances claiming at the same moment each take messages the others did not.
      const { rows } = await write<OutboxRow>(
        `UPDATE outbox_messages SET claimed_until = $2, attempts = attempts + 1
         WHERE id IN (
           SELECT id FROM outbox_messages
           WHERE status = 'queued' AND next_attempt_at <= $1 AND (claimed_until IS NULL OR claimed_until < $1)
           ORDER BY next_attempt_at, created_at LIMIT $3 FOR UPDATE SKIP LOCKED)
         RETURNING ${outboxColumns}`,
        [at(now), at(now + leaseSeconds), limit],
      );
      return rows.map(outboxOf);
    },
    async markSent(id, now) {
      await write(`UPDATE outbox_messages SET status = 'sent', sent_at = $2, claimed_until = NULL, last_error = NULL WHERE id = $1`, [id, at(now)]);
    },
    async markRetry(id, nextAttemptAt, error) {
      await write('UPDATE outbox_messages SET next_attempt_at = $2, claimed_until = NULL, last_error = $3 WHERE id = $1', [id, at(nextAttemptAt), error]);
    },
    async markFailed(id, error) {
      await write(`UPDATE outbox_messages SET status = 'failed', claimed_until = NULL, last_error = $2 WHERE id = $1`, [id, error]);
    },
    async recent({ limit, userId, eventId }) {
      if (userId !== undefined && !isId(userId)) return [];
      const { rows } = await pool.query<OutboxRow>(
        `SELECT ${outboxColumns} FROM outbox_messages
         WHERE ($2::bigint IS NULL OR user_id = $2) AND ($3::text IS NULL OR event_id = $3)
         ORDER BY seq DESC LIMIT $1`,
        [limit, userId ?? null, eventId ?? null],
      );
      return rows.map(outboxOf);
    },
    async summary() {
      // One pass over the table (pruning bounds it to the mail retention), so the figures are of one moment.
      const { rows } = await pool.query<{ queued: Bigint; sent: Bigint; failed: Bigint; oldest_queued_at: Timestamp | null }>(
        `SELECT count(*) FILTER (WHERE status = 'queued') AS queued, count(*) FILTER (WHERE status = 'sent') AS sent,
           count(*) FILTER (WHERE status = 'failed') AS failed, min(created_at) FILTER (WHERE status = 'queued') AS oldest_queued_at
         FROM outbox_messages`,
      );
      const row = rows[0]!;
      return { queued: Number(row.queued), sent: Number(row.sent), failed: Number(row.failed), oldestQueuedAt: row.oldest_queued_at === null ? null : epoch(row.oldest_queued_at) };
    },
  };
}
