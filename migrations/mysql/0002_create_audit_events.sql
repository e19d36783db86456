-- The audit trail (docs/api.md "Audit events"): one row per security event. occurred_at is in epoch milliseconds;
-- user_id is null when no account is known (an unknown e-mail, a token that does not verify). No foreign key to
-- users: the trail outlives a deleted account until AUDIT_RETENTION_DAYS prunes it (its client addresses erased).
-- Never a password, a token or an e-mail address. InnoDB's secondary indexes end with the primary key, so the first
-- index also orders events of the same millisecond by id. Works on MySQL 8 and MariaDB 10.11.
CREATE TABLE audit_events (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  occurred_at BIGINT NOT NULL,
  event VARCHAR(32) NOT NULL,
  user_id CHAR(10) NULL,
  client_address VARCHAR(64) NULL,
  request_id VARCHAR(64) NULL,
  reason VARCHAR(32) NULL,
  KEY audit_events_user_time (user_id, occurred_at),
  KEY audit_events_time (occurred_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
