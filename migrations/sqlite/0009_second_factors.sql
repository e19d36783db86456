-- Second factors, recovery codes and the service's own keys (issue 32, docs/api.md §4.25). Times are epoch
-- milliseconds; a flag is 0 or 1.

-- An account's second factors (FactorStore): a TOTP authenticator, pending until its first code confirms it, or a
-- passkey. A passkey's credential id is unique over every account: the unique index is on its SHA-256 hex digest
-- (the servers' indexes cannot hold 1,366 characters; the same column in every engine), NULL for TOTP (NULLs never
-- meet). The shape check keeps each type's columns to itself, so that no passkey lacks its digest. A rowid table: a
-- passkey's row is up to 4 KiB, and the id is random. The lengths, in characters, are checked as the servers' types
-- do.
CREATE TABLE mfa_factors (
  id TEXT NOT NULL PRIMARY KEY CHECK (length(id) = 32),
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  type TEXT NOT NULL CHECK (type IN ('totp', 'passkey')),
  name TEXT NOT NULL CHECK (length(name) <= 64),
  confirmed INTEGER NOT NULL CHECK (confirmed IN (0, 1)),
  secret TEXT CHECK (length(secret) <= 512),
  last_step INTEGER,
  credential_id TEXT CHECK (length(credential_id) <= 1366),
  credential_digest TEXT CHECK (length(credential_digest) = 64),
  public_key TEXT CHECK (length(public_key) <= 2048),
  counter INTEGER NOT NULL DEFAULT 0,
  backed_up INTEGER NOT NULL DEFAULT 0 CHECK (backed_up IN (0, 1)),
  transports TEXT NOT NULL DEFAULT '[]' CHECK (length(transports) <= 255),
  created_at INTEGER NOT NULL,
  last_used_at INTEGER,
  CHECK (
    (type = 'totp' AND secret IS NOT NULL AND credential_id IS NULL AND credential_digest IS NULL
      AND public_key IS NULL)
    OR (type = 'passkey' AND secret IS NULL AND credential_id IS NOT NULL AND credential_digest IS NOT NULL
      AND public_key IS NOT NULL)
  )
);

CREATE UNIQUE INDEX mfa_factors_credential ON mfa_factors (credential_digest);

-- an account's factors in their order (FactorStore.list), and the foreign key's deletions
CREATE INDEX mfa_factors_user ON mfa_factors (user_id, created_at, id);

-- pruning: the pending factors, the oldest first
CREATE INDEX mfa_factors_pending ON mfa_factors (created_at) WHERE confirmed = 0;

-- An account's unused recovery codes, each as its keyed digest (FactorStore): using one deletes its row. WITHOUT
-- ROWID: short rows looked up by their key, whose account prefix serves the foreign key.
CREATE TABLE mfa_recovery_codes (
  user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  digest TEXT NOT NULL CHECK (length(digest) = 64),
  PRIMARY KEY (user_id, digest)
) WITHOUT ROWID;

-- Keys the service keeps, each sealed by the service (ServiceKeyStore), under a name of 1 to 32 of a-z 0-9 _ -.
CREATE TABLE service_keys (
  name TEXT NOT NULL PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 32),
  value TEXT NOT NULL CHECK (length(value) <= 512)
) WITHOUT ROWID;
