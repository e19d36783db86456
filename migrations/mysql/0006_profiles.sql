-- Profiles, roles and account status, avatars, provider links and one-time tickets (issue 22, docs/api.md §2.1,
-- §4.23, §4.24). Times of the new tables are epoch milliseconds; updated_at is ISO text like created_at. Works on
-- MySQL 8 and MariaDB 10.11. MySQL commits each statement of a migration on its own, so one interrupted before its
-- last statement runs again from its start: the tables may be there already (IF NOT EXISTS, their indexes declared
-- inside them), and the ALTER, which neither engine can write to run twice alike (MySQL has no ADD COLUMN IF NOT
-- EXISTS), comes after them, followed only by the UPDATE that fills in the column it added. Should the UPDATE be
-- what is cut short, the rerun stops at the ALTER: run the UPDATE by hand, then record the migration.

-- One avatar per account (AvatarStore): an upload is an upsert on user_id that replaces the id and the image, so
-- the previous one is gone in the same statement. The id, new for each upload, is what GET /avatars/<id> looks up.
CREATE TABLE IF NOT EXISTS avatars (
  user_id CHAR(10) NOT NULL PRIMARY KEY,
  id CHAR(32) NOT NULL,
  content_type VARCHAR(32) NOT NULL,
  data MEDIUMBLOB NOT NULL,
  created_at BIGINT NOT NULL,
  UNIQUE KEY avatars_id_unique (id),
  CONSTRAINT avatars_content_type_check CHECK (content_type IN ('image/jpeg', 'image/png', 'image/webp')),
  CONSTRAINT avatars_user_fk FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Accounts at providers linked to accounts here (ProviderLinkStore): a provider's account to at most one account
-- (the primary key), an account to at most one account of each provider (the unique key, which also serves the
-- account's reads of its providers, in provider order, and the foreign key).
CREATE TABLE IF NOT EXISTS oauth_accounts (
  provider VARCHAR(32) NOT NULL,
  subject VARCHAR(255) NOT NULL,
  user_id CHAR(10) NOT NULL,
  email VARCHAR(254) NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (provider, subject),
  UNIQUE KEY oauth_accounts_user_provider (user_id, provider),
  CONSTRAINT oauth_accounts_user_fk FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- One-time tickets (TicketStore): a provider sign-in's state, an exchange code, under the keyed digest of its
-- secret, with an opaque payload. The index serves pruning, which then locks only the expired tickets' entries.
CREATE TABLE IF NOT EXISTS oauth_tickets (
  digest CHAR(64) NOT NULL PRIMARY KEY,
  kind VARCHAR(32) NOT NULL,
  payload VARCHAR(4096) NOT NULL,
  expires_at BIGINT NOT NULL,
  KEY oauth_tickets_expiry (expires_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The profile an account sets itself, the role an operator gives it, and whether it may log in. A username is
-- stored lower-cased, so the unique key is the comparison the service makes (NULLs never meet; the binary
-- collation compares byte for byte). VARCHAR counts characters. One ALTER: the columns come all at once or not at
-- all.
ALTER TABLE users
  ADD COLUMN username VARCHAR(32) NULL,
  ADD COLUMN nickname VARCHAR(64) NULL,
  ADD COLUMN bio VARCHAR(500) NULL,
  ADD COLUMN role VARCHAR(32) NOT NULL DEFAULT 'user',
  ADD COLUMN status VARCHAR(16) NOT NULL DEFAULT 'active',
  ADD COLUMN updated_at CHAR(24) NOT NULL DEFAULT '',
  ADD UNIQUE KEY users_username_unique (username),
  ADD CONSTRAINT users_status_check CHECK (status IN ('active', 'disabled'));

-- An account made before this migration was last changed, as far as the store knows, when it was made
UPDATE users SET updated_at = created_at WHERE updated_at = '';
