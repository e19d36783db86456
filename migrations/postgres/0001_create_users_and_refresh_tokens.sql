-- Accounts (spec 2.1). The e-mail is stored normalized (trimmed, lower-cased), so UNIQUE is the account identity.
CREATE TABLE users (
  id CHAR(10) NOT NULL PRIMARY KEY,
  email VARCHAR(254) NOT NULL UNIQUE,
  password_hash VARCHAR(512) NOT NULL,
  created_at CHAR(24) NOT NULL
);

-- One current refresh token per user (spec 2.4), as its SHA-256 digest; expires_at in epoch milliseconds.
CREATE TABLE refresh_tokens (
  user_id CHAR(10) NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  token_digest CHAR(64) NOT NULL,
  expires_at BIGINT NOT NULL
);
