-- Up Migration
-- Notification mail (spec section 6) through a transactional outbox: an event and its messages are written in one
-- transaction, then delivered by workers that claim messages with FOR UPDATE SKIP LOCKED, so each instance sends
-- its own share and none sends a message another is sending.

CREATE TABLE notification_events (
  id text PRIMARY KEY,
  kind text NOT NULL,
  project_id bigint NOT NULL REFERENCES projects ON DELETE CASCADE,
  author_id bigint NOT NULL REFERENCES users ON DELETE CASCADE,
  title text NOT NULL,
  created_at timestamptz NOT NULL
);

CREATE TABLE outbox_messages (
  id text PRIMARY KEY,
  event_id text NOT NULL REFERENCES notification_events ON DELETE CASCADE,
  user_id bigint NOT NULL REFERENCES users ON DELETE CASCADE,
  recipient text NOT NULL,
  subject text NOT NULL,
  body text NOT NULL,
  headers jsonb NOT NULL,
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  -- A worker's claim: until then no other worker takes the message; after, it is due again (the worker died).
  claimed_until timestamptz,
  last_error text,
  created_at timestamptz NOT NULL,
  sent_at timestamptz
);
CREATE INDEX outbox_messages_due ON outbox_messages (next_attempt_at) WHERE status = 'queued';
CREATE INDEX outbox_messages_created ON outbox_messages (created_at);

-- Down Migration
DROP TABLE outbox_messages, notification_events;
