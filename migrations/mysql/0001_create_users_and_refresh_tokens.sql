-- Accounts (spec 2.1). The e-mail is stored normalized (trimmed, lower-cased), so UNIQUE is the account identity;
-- a binary collation compares it byte for byte. Works on MySQL 8 and MariaDB 10.11.
CREATE TABLE users (
  id CHAR(10) NOT NULL PRIMARY KEY,
  email VARCHAR(254) NOT NULL,
  password_hash VARCHAR(512) NOT NULL,
  created_at CHAR(24) NOT NULL,
  UNIQUE KEY users_email_unique (email)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- One current refresh token per user (spec 2.4), as its SHA-256 digest; expires_at in epoch milliseconds.
CREATE TABLE refresh_tokens (
  user_id CHAR(10) NOT NULL PRIMARY KEY,
  token_digest CHAR(64) NOT NULL,
  expires_at BIGINT NOT NULL,
  CONSTRAINT refresh_tokens_user_fk FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
