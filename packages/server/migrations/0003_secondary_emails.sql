-- Up Migration
-- Verified secondary e-mail addresses. An address belongs to one user, primary or secondary, whatever its case. That
-- rule spans two kinds of address, and only a unique index holds it against every writer and every race (a trigger
-- that looks before it inserts lets two transactions both find nothing; a text[] column cannot be indexed per
-- entry). So this table holds every address a user owns, the primary one included, under one unique index on
-- lower(email); users.email stays what sign-in and the hot queries read, and a trigger keeps its copy here.

CREATE TABLE user_emails (
  user_id bigint NOT NULL REFERENCES users ON DELETE CASCADE,
  -- 0 for the primary address (users.email), 1, 2, ... for the secondary ones in the order given.
  position integer NOT NULL CHECK (position >= 0),
  email text NOT NULL,
  PRIMARY KEY (user_id, position)
);
CREATE UNIQUE INDEX user_emails_email_key ON user_emails (lower(email));

-- Whoever writes users (the server, a bulk load, an administrator in psql), the primary address is in the index.
CREATE FUNCTION user_emails_keep_primary() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO user_emails (user_id, position, email) VALUES (NEW.id, 0, NEW.email);
  ELSE
    UPDATE user_emails SET email = NEW.email WHERE user_id = NEW.id AND position = 0;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER user_emails_primary AFTER INSERT OR UPDATE OF email ON users
  FOR EACH ROW EXECUTE FUNCTION user_emails_keep_primary();

INSERT INTO user_emails (user_id, position, email) SELECT id, 0, email FROM users;

-- Down Migration
DROP TRIGGER user_emails_primary ON users;
DROP FUNCTION user_emails_keep_primary();
DROP TABLE user_emails;
