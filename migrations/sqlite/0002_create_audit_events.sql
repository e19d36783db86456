-- The audit trail (docs/api.md "Audit events"): one row per security event. occurred_at is in epoch milliseconds;
-- user_id is null when no account is known (an unknown e-mail, a token that does not verify). No foreign key to
-- users: the trail outlives a deleted account until AUDIT_RETENTION_DAYS prunes it (its client addresses erased).
-- Never a password, a token or an e-mail address.
-- A rowid table, not WITHOUT ROWID: rows are appended in key order under an integer key (the rowid itself), which is
-- what a rowid table is made for; WITHOUT ROWID pays off for text or composite keys.
CREATE TABLE audit_events (
  id INTEGER PRIMARY KEY,
  occurred_at INTEGER NOT NULL,
  event TEXT NOT NULL,
  user_id TEXT,
  client_address TEXT,
  request_id TEXT,
  reason TEXT
);

-- `tessera audit --user`: one user's events in time order
CREATE INDEX audit_events_user_time ON audit_events (user_id, occurred_at);

-- pruning: the oldest events first
CREATE INDEX audit_events_time ON audit_events (occurred_at);
