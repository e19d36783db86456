-- E-mail (issue 21): whether an account's address was proved, one-time codes, the outbox, and hit counters shared
-- by every process when there is no Redis. Times are epoch milliseconds.

-- Accounts made before codes existed never proved their address: they start unverified (docs/api.md §4.15). A
-- password_hash of '' is an account without a usable password (UserRecord.passwordHash null).
ALTER TABLE users ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 0 CHECK (email_verified IN (0, 1));

-- One code per (address, purpose, asking account), as its keyed digest (docs/api.md §4.14); user_id '' for the
-- codes anyone may ask for, so no foreign key: an account's deletion removes its codes by statement
-- (EmailCodeStore.deleteFor), through the primary key's address prefix and the user_id index. WITHOUT ROWID: looked
-- up by its composite key only, and its rows are short.
CREATE TABLE email_codes (
  address TEXT NOT NULL,
  purpose TEXT NOT NULL,
  user_id TEXT NOT NULL,
  code_digest TEXT NOT NULL CHECK (length(code_digest) = 64),
  expires_at INTEGER NOT NULL,
  tries INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (address, purpose, user_id)
) WITHOUT ROWID;

CREATE INDEX email_codes_user ON email_codes (user_id);

-- pruning: the expired codes first
CREATE INDEX email_codes_expiry ON email_codes (expires_at);

-- Mail committed before the answer that says it was sent (docs/api.md §6.4). A message is held by the sender that
-- claimed it (claimant, a random value of each claim) until lease_until; 0 and NULL when nobody holds it. A rowid
-- table, not WITHOUT ROWID: a payload of up to 8 KiB would spill the rows of a WITHOUT ROWID table's B-tree onto
-- overflow pages, and the id is random.
CREATE TABLE outbox (
  id TEXT NOT NULL PRIMARY KEY CHECK (length(id) = 32),
  user_id TEXT,
  recipient TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  claimant TEXT,
  lease_until INTEGER NOT NULL DEFAULT 0
);

-- the claim, in its order: the messages due, the longest due first; an idle poll reads this index and nothing else
CREATE INDEX outbox_due ON outbox (next_attempt_at, id);

-- an account's deletion: the messages about it, and those to its address
CREATE INDEX outbox_user ON outbox (user_id);
CREATE INDEX outbox_recipient ON outbox (recipient);

-- Hit counters in fixed windows (RateCounterStore) for every process of a store without Redis: the count of the
-- window that ends at window_ends. WITHOUT ROWID: looked up by its text key only.
CREATE TABLE rate_counters (
  counter_key TEXT NOT NULL PRIMARY KEY,
  window_ends INTEGER NOT NULL,
  hits INTEGER NOT NULL
) WITHOUT ROWID;

-- pruning: the ended windows
CREATE INDEX rate_counters_window_ends ON rate_counters (window_ends);
