-- Profiles, roles and account status, avatars, provider links and one-time tickets (issue 22, docs/api.md §2.1,
-- §4.23, §4.24). Times of the new tables are epoch milliseconds; updated_at is ISO text like created_at.

-- The profile an account sets itself, the role an operator gives it, and whether it may log in. A username is
-- stored lower-cased, so the unique constraint is the comparison the service makes (NULLs never meet). An account
-- made before this migration was last changed, as far as the store knows, when it was made: updated_at is filled
-- in from created_at, then required (the migration runs in one transaction).
ALTER TABLE users
  ADD COLUMN username VARCHAR(32) CONSTRAINT users_username_unique UNIQUE,
  ADD COLUMN nickname VARCHAR(64),
  ADD COLUMN bio VARCHAR(500),
  ADD COLUMN role VARCHAR(32) NOT NULL DEFAULT 'user',
  ADD COLUMN status VARCHAR(16) NOT NULL DEFAULT 'active' CONSTRAINT users_status_check
    CHECK (status IN ('active', 'disabled')),
  ADD COLUMN updated_at CHAR(24);

UPDATE users SET updated_at = created_at;

ALTER TABLE users ALTER COLUMN updated_at SET NOT NULL;

-- One avatar per account (AvatarStore): an upload is an upsert on user_id that replaces the id and the image, so
-- the previous one is gone in the same statement. The id, new for each upload, is what GET /avatars/<id> looks up.
CREATE TABLE avatars (
  user_id CHAR(10) NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  id CHAR(32) NOT NULL CONSTRAINT avatars_id_unique UNIQUE,
  content_type VARCHAR(32) NOT NULL CHECK (content_type IN ('image/jpeg', 'image/png', 'image/webp')),
  data BYTEA NOT NULL,
  created_at BIGINT NOT NULL
);

-- Accounts at providers linked to accounts here (ProviderLinkStore): a provider's account to at most one account
-- (the primary key), an account to at most one account of each provider (the unique constraint, whose index also
-- serves the account's reads of its providers, in provider order, and the deletion of an account).
CREATE TABLE oauth_accounts (
  provider VARCHAR(32) NOT NULL,
  subject VARCHAR(255) NOT NULL,
  user_id CHAR(10) NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  email VARCHAR(254),
  created_at BIGINT NOT NULL,
  PRIMARY KEY (provider, subject),
  CONSTRAINT oauth_accounts_user_provider UNIQUE (user_id, provider)
);

-- One-time tickets (TicketStore): a provider sign-in's state, an exchange code, under the keyed digest of its
-- secret, with an opaque payload.
CREATE TABLE oauth_tickets (
  digest CHAR(64) NOT NULL PRIMARY KEY,
  kind VARCHAR(32) NOT NULL,
  payload VARCHAR(4096) NOT NULL,
  expires_at BIGINT NOT NULL
);

-- pruning: the expired tickets first
CREATE INDEX oauth_tickets_expiry ON oauth_tickets (expires_at);
