-- E-mail (issue 21): whether an account's address was proved, one-time codes, the outbox, and hit counters shared
-- by every process when there is no Redis. Times are epoch milliseconds.

-- Accounts made before codes existed never proved their address: they start unverified (docs/api.md §4.15). A
-- password_hash of '' is an account without a usable password (UserRecord.passwordHash null).
ALTER TABLE users ADD COLUMN email_verified BOOLEAN NOT NULL DEFAULT FALSE;

-- One code per (address, purpose, asking account), as its keyed digest (docs/api.md §4.14); user_id '' for the
-- codes anyone may ask for, so no foreign key: an account's deletion removes its codes by statement
-- (EmailCodeStore.deleteFor), through the primary key's address prefix and the user_id index.
CREATE TABLE email_codes (
  address VARCHAR(254) NOT NULL,
  purpose VARCHAR(32) NOT NULL,
  user_id VARCHAR(10) NOT NULL,
  code_digest CHAR(64) NOT NULL,
  expires_at BIGINT NOT NULL,
  tries INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (address, purpose, user_id)
);

CREATE INDEX email_codes_user ON email_codes (user_id);

-- pruning: the expired codes first
CREATE INDEX email_codes_expiry ON email_codes (expires_at);

-- Mail committed before the answer that says it was sent (docs/api.md §6.4). A message is held by the sender that
-- claimed it (claimant, a random value of each claim) until lease_until; 0 and NULL when nobody holds it.
CREATE TABLE outbox (
  id CHAR(32) NOT NULL PRIMARY KEY,
  user_id CHAR(10),
  recipient VARCHAR(254) NOT NULL,
  payload TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at BIGINT NOT NULL,
  claimant CHAR(32),
  lease_until BIGINT NOT NULL DEFAULT 0
);

-- the claim, in its order: the messages due, the longest due first; an idle poll reads this index and nothing else
CREATE INDEX outbox_due ON outbox (next_attempt_at, id);

-- an account's deletion: the messages about it, and those to its address
CREATE INDEX outbox_user ON outbox (user_id);
CREATE INDEX outbox_recipient ON outbox (recipient);

-- Hit counters in fixed windows (RateCounterStore) for every process of a store without Redis: the count of the
-- window that ends at window_ends.
CREATE TABLE rate_counters (
  counter_key VARCHAR(300) NOT NULL PRIMARY KEY,
  window_ends BIGINT NOT NULL,
  hits INTEGER NOT NULL
);

-- pruning: the ended windows
CREATE INDEX rate_counters_window_ends ON rate_counters (window_ends);
