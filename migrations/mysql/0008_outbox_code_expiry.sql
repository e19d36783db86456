-- The outbox's claim order (issue 31, docs/api.md R6.4.2): a code is worth sending only until it expires, so while
-- mail waits the newest codes go first, and what is not a code (a notice) before them, in its own order. The sealed
-- payload says which a message is; code_expires_at says it to the claim: the code's expiry (epoch milliseconds), or
-- NULL for anything else, as for every message queued before this migration (they wait with the notices). Works on
-- MySQL 8 and MariaDB 10.11.

-- One ALTER: the column and its index come together or not at all. The index serves both orders of the claim, each
-- from one end (InnoDB's secondary indexes end with the primary key): the due messages that are not codes (NULL, the
-- index's start), the longest due first; the due codes, the latest expiry first (read backwards from its end).
ALTER TABLE outbox
  ADD COLUMN code_expires_at BIGINT NULL,
  ADD KEY outbox_lanes (code_expires_at, next_attempt_at);
