-- Up Migration
-- The order messages were queued in, for "newest first": created_at counts whole seconds, and ids are random, so
-- messages of one second would otherwise come back in any order.
ALTER TABLE outbox_messages ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
DROP INDEX outbox_messages_created;
CREATE INDEX outbox_messages_seq ON outbox_messages (seq);

-- Down Migration
DROP INDEX outbox_messages_seq;
CREATE INDEX outbox_messages_created ON outbox_messages (created_at);
ALTER TABLE outbox_messages DROP COLUMN seq;
