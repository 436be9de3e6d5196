-- Up Migration
-- Device authorizations (RFC 8628): made by the device authorization endpoint, answered once by a user on the
-- verification page, redeemed once by the device's poll. Both codes are kept as digests (the user code's of its
-- normalised form), each unique, so a lookup by either finds one row.
CREATE TABLE device_grants (
  id text PRIMARY KEY,
  device_code_digest text NOT NULL UNIQUE,
  user_code_digest text NOT NULL UNIQUE,
  application_id bigint NOT NULL REFERENCES applications ON DELETE CASCADE,
  scopes text[] NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  -- The least number of seconds between two polls.
  interval integer NOT NULL CHECK (interval > 0),
  -- The last poll told to keep waiting; a poll refused as too early leaves it.
  last_polled_at timestamptz,
  decision text CHECK (decision IN ('approved', 'denied')),
  user_id bigint REFERENCES users ON DELETE CASCADE,
  decided_at timestamptz,
  -- When the user who approved had signed in.
  auth_time timestamptz,
  -- Set once, by the poll that got the tokens.
  redeemed_at timestamptz,
  CHECK ((decision IS NULL) = (user_id IS NULL))
);
CREATE INDEX device_grants_expires ON device_grants (expires_at);
-- Revoking a user's authorization of an application drops the device authorizations they approved for it.
CREATE INDEX device_grants_user_application ON device_grants (user_id, application_id) WHERE user_id IS NOT NULL;

-- Down Migration
DROP TABLE device_grants;
