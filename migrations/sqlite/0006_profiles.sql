-- Profiles, roles and account status, avatars, provider links and one-time tickets (issue 22, docs/api.md §2.1,
-- §4.23, §4.24). Times of the new tables are epoch milliseconds; updated_at is ISO text like created_at.

-- The profile an account sets itself, the role an operator gives it, and whether it may log in. A username is
-- stored lower-cased, so the unique index is the comparison the service makes (NULLs never meet); SQLite adds no
-- UNIQUE column, so the index is made after. The lengths, in characters, are checked as the servers' types do.
ALTER TABLE users ADD COLUMN username TEXT CHECK (length(username) <= 32);
ALTER TABLE users ADD COLUMN nickname TEXT CHECK (length(nickname) <= 64);
ALTER TABLE users ADD COLUMN bio TEXT CHECK (length(bio) <= 500);
ALTER TABLE users ADD COLUMN role TEXT NOT NULL DEFAULT 'user' CHECK (length(role) <= 32);
ALTER TABLE users ADD COLUMN status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled'));

-- An account made before this migration was last changed, as far as the store knows, when it was made
ALTER TABLE users ADD COLUMN updated_at TEXT NOT NULL DEFAULT '';
UPDATE users SET updated_at = created_at;

CREATE UNIQUE INDEX users_username ON users (username);

-- One avatar per account (AvatarStore): an upload is an upsert on user_id that replaces the id and the image, so
-- the previous one is gone in the same statement. The id, new for each upload, is what GET /avatars/<id> looks up.
-- A rowid table, not WITHOUT ROWID: an image would spill a WITHOUT ROWID table's B-tree onto overflow pages.
CREATE TABLE avatars (
  user_id TEXT NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  id TEXT NOT NULL UNIQUE CHECK (length(id) = 32),
  content_type TEXT NOT NULL CHECK (content_type IN ('image/jpeg', 'image/png', 'image/webp')),
  data BLOB NOT NULL,
  created_at INTEGER NOT NULL
);

-- Accounts at providers linked to accounts here (ProviderLinkStore): a provider's account to at most one account
-- (the primary key), an account to at most one account of each provider (the unique index, which also serves the
-- account's reads of its providers, in provider order, and the foreign key). WITHOUT ROWID: short rows looked up by
-- their key.
CREATE TABLE oauth_accounts (
  provider TEXT NOT NULL CHECK (length(provider) <= 32),
  subject TEXT NOT NULL CHECK (length(subject) <= 255),
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  email TEXT CHECK (length(email) <= 254),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (provider, subject)
) WITHOUT ROWID;

CREATE UNIQUE INDEX oauth_accounts_user ON oauth_accounts (user_id, provider);

-- One-time tickets (TicketStore): a provider sign-in's state, an exchange code, under the keyed digest of its
-- secret, with an opaque payload. A rowid table: a payload of up to 4 KiB.
CREATE TABLE oauth_tickets (
  digest TEXT NOT NULL PRIMARY KEY CHECK (length(digest) = 64),
  kind TEXT NOT NULL CHECK (length(kind) <= 32),
  payload TEXT NOT NULL CHECK (length(payload) <= 4096),
  expires_at INTEGER NOT NULL
);

-- pruning: the expired tickets first
CREATE INDEX oauth_tickets_expiry ON oauth_tickets (expires_at);
