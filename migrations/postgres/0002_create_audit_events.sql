-- The audit trail (docs/api.md "Audit events"): one row per security event. occurred_at is in epoch milliseconds;
-- user_id is null when no account is known (an unknown e-mail, a token that does not verify). No foreign key to
-- users: the trail outlives a deleted account until AUDIT_RETENTION_DAYS prunes it (its client addresses erased).
-- Never a password, a token or an e-mail address.
CREATE TABLE audit_events (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  occurred_at BIGINT NOT NULL,
  event VARCHAR(32) NOT NULL,
  user_id CHAR(10),
  client_address VARCHAR(64),
  request_id VARCHAR(64),
  reason VARCHAR(32)
);

-- `tessera audit --user`: one user's events in time order (id orders events of the same millisecond)
CREATE INDEX audit_events_user_time ON audit_events (user_id, occurred_at, id);

-- pruning: the oldest events first
CREATE INDEX audit_events_time ON audit_events (occurred_at);
