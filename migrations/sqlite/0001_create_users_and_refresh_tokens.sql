-- Accounts (spec 2.1). The e-mail is stored normalized (trimmed, lower-cased), so UNIQUE is the account identity.
-- WITHOUT ROWID: both tables are looked up by their text primary key, which is then the table's own B-tree.
CREATE TABLE users (
  id TEXT NOT NULL PRIMARY KEY CHECK (length(id) = 10),
  email TEXT NOT NULL UNIQUE,
  password_hash TEXT NOT NULL,
  created_at TEXT NOT NULL
) WITHOUT ROWID;

-- One current refresh token per user (spec 2.4), as its SHA-256 digest; expires_at in epoch milliseconds.
CREATE TABLE refresh_tokens (
  user_id TEXT NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  token_digest TEXT NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
