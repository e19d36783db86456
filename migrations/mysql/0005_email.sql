-- E-mail (issue 21): whether an account's address was proved, one-time codes, the outbox, and hit counters shared
-- by every process when there is no Redis. Times are epoch milliseconds. Works on MySQL 8 and MariaDB 10.11.
-- MySQL commits each statement of a migration on its own, so one interrupted before its last statement runs again
-- from its start: the tables may be there already (IF NOT EXISTS, their indexes declared inside them), and the
-- ALTER, which neither engine can write to run twice alike (MySQL has no ADD COLUMN IF NOT EXISTS), comes last.

-- One code per (address, purpose, asking account), as its keyed digest (docs/api.md §4.14); user_id '' for the
-- codes anyone may ask for, so no foreign key: an account's deletion removes its codes by statement
-- (EmailCodeStore.deleteFor), through the primary key's address prefix and the user_id index. The second index
-- serves pruning, which then locks only the expired codes' entries.
CREATE TABLE IF NOT EXISTS email_codes (
  address VARCHAR(254) NOT NULL,
  purpose VARCHAR(32) NOT NULL,
  user_id VARCHAR(10) NOT NULL,
  code_digest CHAR(64) NOT NULL,
  expires_at BIGINT NOT NULL,
  tries INT NOT NULL DEFAULT 0,
  PRIMARY KEY (address, purpose, user_id),
  KEY email_codes_user (user_id),
  KEY email_codes_expiry (expires_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Mail committed before the answer that says it was sent (docs/api.md §6.4). A message is held by the sender that
-- claimed it (claimant, a random value of each claim) until lease_until; 0 and NULL when nobody holds it.
-- outbox_due serves the claim in its order (InnoDB's secondary indexes end with the primary key: next_attempt_at,
-- then id), and an idle poll reads it and nothing else; the other two an account's deletion.
CREATE TABLE IF NOT EXISTS outbox (
  id CHAR(32) NOT NULL PRIMARY KEY,
  user_id CHAR(10) NULL,
  recipient VARCHAR(254) NOT NULL,
  payload TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  attempts INT NOT NULL DEFAULT 0,
  next_attempt_at BIGINT NOT NULL,
  claimant CHAR(32) NULL,
  lease_until BIGINT NOT NULL DEFAULT 0,
  KEY outbox_due (next_attempt_at),
  KEY outbox_user (user_id),
  KEY outbox_recipient (recipient)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Hit counters in fixed windows (RateCounterStore) for every process of a store without Redis: the count of the
-- window that ends at window_ends. The index serves pruning.
CREATE TABLE IF NOT EXISTS rate_counters (
  counter_key VARCHAR(300) NOT NULL PRIMARY KEY,
  window_ends BIGINT NOT NULL,
  hits INT NOT NULL,
  KEY rate_counters_window_ends (window_ends)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Accounts made before codes existed never proved their address: they start unverified (docs/api.md §4.15). A
-- password_hash of '' is an account without a usable password (UserRecord.passwordHash null).
ALTER TABLE users ADD COLUMN email_verified BOOLEAN NOT NULL DEFAULT FALSE;
