-- Up Migration
-- A rotated-in signing key is published before it signs, for as long as a client may cache the JWK set: `signs_from`
-- is when it starts, and `retired_at`, set by the rotation after it, when it stops (both may be ahead of the clock;
-- every instance reads the timeline against its own). Keys made before this signed from their making on.
ALTER TABLE signing_keys ADD COLUMN signs_from timestamptz;
UPDATE signing_keys SET signs_from = created_at;
ALTER TABLE signing_keys ALTER COLUMN signs_from SET NOT NULL;

-- Down Migration
ALTER TABLE signing_keys DROP COLUMN signs_from;
