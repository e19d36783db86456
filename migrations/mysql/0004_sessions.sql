-- Sessions (docs/api.md §2.4): one device's chain of refresh tokens, of which only the current one is stored, as its
-- SHA-256 digest. Times are epoch milliseconds. previous_digest and rotated_at name the token the current one
-- replaced and when (the reuse grace's anchor); NULL before the first rotation.
-- `slot` keeps the limit of one session per user a single statement can hold under concurrency: a session started
-- with the `single` limit takes the slot 'single', and its start is an upsert on (user_id, slot) that replaces the
-- row there, id and all; any other session's slot is its own id. The unique index also serves every lookup of a
-- user's sessions, by its user_id prefix, and the foreign key. Works on MySQL 8 and MariaDB 10.11.
-- MySQL commits each statement of a migration on its own, so one interrupted before its last statement runs again
-- from its start: the table may be there already, and so may the copied rows (IGNORE skips them by their
-- (user_id, slot)).
CREATE TABLE IF NOT EXISTS sessions (
  id CHAR(32) NOT NULL PRIMARY KEY,
  user_id CHAR(10) NOT NULL,
  slot VARCHAR(32) NOT NULL,
  token_digest CHAR(64) NOT NULL,
  expires_at BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  last_used_at BIGINT NOT NULL,
  device VARCHAR(64) NOT NULL DEFAULT '',
  client_address VARCHAR(64) NULL,
  previous_digest CHAR(64) NULL,
  rotated_at BIGINT NULL,
  UNIQUE KEY sessions_user_slot (user_id, slot),
  CONSTRAINT sessions_user_fk FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Every refresh token stored before sessions becomes its user's session of slot 'single' (what a login in the
-- default mode starts), so that it still refreshes once; when it started is not known, so it counts from now (UTC,
-- whatever the session's time zone). The id is 32 random hexadecimal digits.
INSERT IGNORE INTO sessions (id, user_id, slot, token_digest, expires_at, created_at, last_used_at, device)
SELECT MD5(CONCAT(UUID(), RAND(), user_id)), user_id, 'single', token_digest, expires_at,
  TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000,
  TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000, ''
FROM refresh_tokens;

DROP TABLE refresh_tokens;
