-- Sessions (docs/api.md §2.4): one device's chain of refresh tokens, of which only the current one is stored, as its
-- SHA-256 digest. Times are epoch milliseconds. previous_digest and rotated_at name the token the current one
-- replaced and when (the reuse grace's anchor); NULL before the first rotation.
-- `slot` keeps the limit of one session per user a single statement can hold under concurrency: a session started
-- with the `single` limit takes the slot 'single', and its start is an upsert on (user_id, slot) that replaces the
-- row there, id and all; any other session's slot is its own id.
-- WITHOUT ROWID, keyed by (user_id, slot): every statement names the user, so a rotation, the hot path, walks one
-- B-tree to its row, and a user's sessions sit together. The session id is not a key of its own: it is 128 random
-- bits, looked up within one user's few rows. (Keyed by the random id instead, each start and each batch of
-- `tessera store copy` wrote pages all over the table: twice the time to fill it.)
CREATE TABLE sessions (
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  slot TEXT NOT NULL,
  id TEXT NOT NULL CHECK (length(id) = 32),
  token_digest TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL,
  device TEXT NOT NULL DEFAULT '',
  client_address TEXT,
  previous_digest TEXT,
  rotated_at INTEGER,
  PRIMARY KEY (user_id, slot)
) WITHOUT ROWID;

-- Every refresh token stored before sessions becomes its user's session of slot 'single' (what a login in the
-- default mode starts), so that it still refreshes once; when it started is not known, so it counts from now.
INSERT INTO sessions (id, user_id, slot, token_digest, expires_at, created_at, last_used_at, device)
SELECT lower(hex(randomblob(16))), user_id, 'single', token_digest, expires_at,
  CAST(unixepoch('subsec') * 1000 AS INTEGER), CAST(unixepoch('subsec') * 1000 AS INTEGER), ''
FROM refresh_tokens;

DROP TABLE refresh_tokens;
