-- The outbox's claim order (issue 31, docs/api.md R6.4.2): a code is worth sending only until it expires, so while
-- mail waits the newest codes go first, and what is not a code (a notice) before them, in its own order. The sealed
-- payload says which a message is; code_expires_at says it to the claim: the code's expiry (epoch milliseconds), or
-- NULL for anything else, as for every message queued before this migration (they wait with the notices).

ALTER TABLE outbox ADD COLUMN code_expires_at INTEGER;

-- the claim's two orders, each read from one end of its own index: the due messages that are not codes, the longest
-- due first; the due codes, the latest expiry first (the index read backwards)
CREATE INDEX outbox_others ON outbox (next_attempt_at, id) WHERE code_expires_at IS NULL;
CREATE INDEX outbox_codes ON outbox (code_expires_at, next_attempt_at, id) WHERE code_expires_at IS NOT NULL;
