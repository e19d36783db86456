-- Second factors, recovery codes and the service's own keys (issue 32, docs/api.md §4.25). Times are epoch
-- milliseconds.

-- An account's second factors (FactorStore): a TOTP authenticator, pending until its first code confirms it, or a
-- passkey. A passkey's credential id is unique over every account: the unique constraint is on its SHA-256 hex
-- digest (MySQL's indexes cannot hold 1,366 characters; the same column in every engine), NULL for TOTP (NULLs never
-- meet). The shape check keeps each type's columns to itself, so that no passkey lacks its digest.
CREATE TABLE mfa_factors (
  id CHAR(32) NOT NULL PRIMARY KEY,
  user_id CHAR(10) NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  type VARCHAR(16) NOT NULL CHECK (type IN ('totp', 'passkey')),
  name VARCHAR(64) NOT NULL,
  confirmed BOOLEAN NOT NULL,
  secret VARCHAR(512),
  last_step BIGINT,
  credential_id VARCHAR(1366),
  credential_digest CHAR(64) CONSTRAINT mfa_factors_credential UNIQUE,
  public_key VARCHAR(2048),
  counter BIGINT NOT NULL DEFAULT 0,
  backed_up BOOLEAN NOT NULL DEFAULT FALSE,
  transports VARCHAR(255) NOT NULL DEFAULT '[]',
  created_at BIGINT NOT NULL,
  last_used_at BIGINT,
  CONSTRAINT mfa_factors_shape CHECK (
    (type = 'totp' AND secret IS NOT NULL AND credential_id IS NULL AND credential_digest IS NULL
      AND public_key IS NULL)
    OR (type = 'passkey' AND secret IS NULL AND credential_id IS NOT NULL AND credential_digest IS NOT NULL
      AND public_key IS NOT NULL)
  )
);

-- an account's factors in their order (FactorStore.list), and the foreign key's deletions
CREATE INDEX mfa_factors_user ON mfa_factors (user_id, created_at, id);

-- pruning: the pending factors, the oldest first
CREATE INDEX mfa_factors_pending ON mfa_factors (created_at) WHERE NOT confirmed;

-- An account's unused recovery codes, each as its keyed digest (FactorStore): using one deletes its row. The
-- primary key's account prefix serves the foreign key.
CREATE TABLE mfa_recovery_codes (
  user_id CHAR(10) NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  digest CHAR(64) NOT NULL,
  PRIMARY KEY (user_id, digest)
);

-- Keys the service keeps, each sealed by the service (ServiceKeyStore), under a name of 1 to 32 of a-z 0-9 _ -.
CREATE TABLE service_keys (
  name VARCHAR(32) NOT NULL PRIMARY KEY,
  value VARCHAR(512) NOT NULL
);
