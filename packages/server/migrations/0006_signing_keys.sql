-- Up Migration
-- The keys that sign OpenID Connect id_tokens (RS256). The first instance to start makes the first key, `tokenbell
-- keys rotate` the next ones; a retired key stays a day, published for id_tokens signed before the rotation. The
-- private key is kept as is (PKCS#8 PEM), as the TOTP secrets are: signing needs the key itself.

CREATE TABLE signing_keys (
  -- The RFC 7638 JWK SHA-256 thumbprint of the public key, base64url.
  kid text PRIMARY KEY,
  private_key text NOT NULL,
  -- The public key's JWK members (kty, n, e).
  public_jwk jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  -- Null for the key that signs now.
  retired_at timestamptz
);
-- One signing key at most, whoever writes: instances adding the first key at once, or rotations at once, cannot
-- leave two. Every instance looks the signing key up through it before each signature.
CREATE UNIQUE INDEX signing_keys_signing ON signing_keys ((retired_at IS NULL)) WHERE retired_at IS NULL;

-- Down Migration
DROP TABLE signing_keys;
