-- Up Migration
-- OpenID Connect: an authorization code keeps the request's nonce and when the user signed in to approve it, and a
-- token pair keeps that sign-in time along its refresh chain, for the id_token's `nonce` and `auth_time`.
ALTER TABLE authorization_codes ADD COLUMN nonce text, ADD COLUMN auth_time timestamptz;
ALTER TABLE access_tokens ADD COLUMN auth_time timestamptz;

-- Down Migration
ALTER TABLE access_tokens DROP COLUMN auth_time;
ALTER TABLE authorization_codes DROP COLUMN nonce, DROP COLUMN auth_time;
