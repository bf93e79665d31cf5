-- Browser sessions of the admin console, in Postgres so that any number of API replicas serve
-- one login (no sticky routing, and a restart logs nobody out).
--
-- The cookie is 256 random bits; only its SHA-256 is stored, so reading this table gives no
-- usable cookie. The CSRF token is derived from the cookie (an HMAC) and never stored.
-- A row is live while expires_at is ahead (each use moves it an idle lifetime ahead) and
-- revoked_at is null. Revoked and expired rows are kept a day, so a refusal can say who it
-- was and why (audited), then pruned at the next login.
CREATE TABLE tether.console_session (
  id_hash bytea PRIMARY KEY,
  -- The token's name and role at login (the role in force is the configured token's).
  actor text NOT NULL,
  role text NOT NULL CHECK (role IN ('viewer', 'operator')),
  -- HMAC-SHA256, keyed by the cookie, of the digest of the token the session logged in with.
  -- Every request checks it against the configured tokens: removing or rotating a token
  -- revokes its sessions. Without the cookie it tells nothing about the token.
  token_mac bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  seen_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  revoked_reason text CHECK (revoked_reason IN ('logout', 'token_removed')),
  CONSTRAINT console_session_revoked_with_reason CHECK ((revoked_at IS NULL) = (revoked_reason IS NULL))
);
CREATE INDEX console_session_expires_idx ON tether.console_session (expires_at);
