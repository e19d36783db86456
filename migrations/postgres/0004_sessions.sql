-- Sessions (docs/api.md §2.4): one device's chain of refresh tokens, of which only the current one is stored, as its
-- SHA-256 digest. Times are epoch milliseconds. previous_digest and rotated_at name the token the current one
-- replaced and when (the reuse grace's anchor); NULL before the first rotation.
-- `slot` keeps the limit of one session per user a single statement can hold under concurrency: a session started
-- with the `single` limit takes the slot 'single', and its start is an upsert on (user_id, slot) that replaces the
-- row there, id and all; any other session's slot is its own id. The unique index also serves every lookup of a
-- user's sessions, by its user_id prefix.
CREATE TABLE sessions (
  id CHAR(32) NOT NULL PRIMARY KEY,
  user_id CHAR(10) NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  slot VARCHAR(32) NOT NULL,
  token_digest CHAR(64) NOT NULL,
  expires_at BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  last_used_at BIGINT NOT NULL,
  device VARCHAR(64) NOT NULL DEFAULT '',
  client_address VARCHAR(64),
  previous_digest CHAR(64),
  rotated_at BIGINT,
  CONSTRAINT sessions_user_slot UNIQUE (user_id, slot)
);

-- Every refresh token stored before sessions becomes its user's session of slot 'single' (what a login in the
-- default mode starts), so that it still refreshes once; when it started is not known, so it counts from now. The
-- id is 32 random hexadecimal digits (user_id, one row per user, keeps the digests' inputs apart).
INSERT INTO sessions (id, user_id, slot, token_digest, expires_at, created_at, last_used_at, device)
SELECT md5(random()::text || clock_timestamp()::text || user_id), user_id, 'single', token_digest, expires_at,
  floor(extract(epoch FROM now()) * 1000)::bigint, floor(extract(epoch FROM now()) * 1000)::bigint, ''
FROM refresh_tokens;

DROP TABLE refresh_tokens;
