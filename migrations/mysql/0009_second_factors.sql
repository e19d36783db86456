-- Second factors, recovery codes and the service's own keys (issue 32, docs/api.md §4.25). Times are epoch
-- milliseconds; a flag is a BOOLEAN (0 or 1). Works on MySQL 8 and MariaDB 10.11. MySQL commits each statement of a
-- migration on its own, so one interrupted runs again from its start: the tables may be there already (IF NOT
-- EXISTS, their indexes declared inside them). VARCHAR counts characters; the binary collation compares byte for
-- byte (a credential id, a sealed value, a digest).

-- An account's second factors (FactorStore): a TOTP authenticator, pending until its first code confirms it, or a
-- passkey. A passkey's credential id is unique over every account: the unique key is on its SHA-256 hex digest (an
-- index cannot hold 1,366 characters of utf8mb4: 3,072 bytes at most), NULL for TOTP (NULLs never meet). The shape
-- check keeps each type's columns to itself, so that no passkey lacks its digest. The user index serves the
-- account's factors in their order (FactorStore.list) and the foreign key; the pending one, pruning.
CREATE TABLE IF NOT EXISTS mfa_factors (
  id CHAR(32) NOT NULL PRIMARY KEY,
  user_id CHAR(10) NOT NULL,
  type VARCHAR(16) NOT NULL,
  name VARCHAR(64) NOT NULL,
  confirmed BOOLEAN NOT NULL,
  secret VARCHAR(512) NULL,
  last_step BIGINT NULL,
  credential_id VARCHAR(1366) NULL,
  credential_digest CHAR(64) NULL,
  public_key VARCHAR(2048) NULL,
  counter BIGINT NOT NULL DEFAULT 0,
  backed_up BOOLEAN NOT NULL DEFAULT FALSE,
  transports VARCHAR(255) NOT NULL DEFAULT '[]',
  created_at BIGINT NOT NULL,
  last_used_at BIGINT NULL,
  UNIQUE KEY mfa_factors_credential (credential_digest),
  KEY mfa_factors_user (user_id, created_at, id),
  KEY mfa_factors_pending (confirmed, created_at),
  CONSTRAINT mfa_factors_type_check CHECK (type IN ('totp', 'passkey')),
  CONSTRAINT mfa_factors_shape CHECK (
    (type = 'totp' AND secret IS NOT NULL AND credential_id IS NULL AND credential_digest IS NULL
      AND public_key IS NULL)
    OR (type = 'passkey' AND secret IS NULL AND credential_id IS NOT NULL AND credential_digest IS NOT NULL
      AND public_key IS NOT NULL)
  ),
  CONSTRAINT mfa_factors_user_fk FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- An account's unused recovery codes, each as its keyed digest (FactorStore): using one deletes its row. The
-- primary key's account prefix serves the foreign key.
CREATE TABLE IF NOT EXISTS mfa_recovery_codes (
  user_id CHAR(10) NOT NULL,
  digest CHAR(64) NOT NULL,
  PRIMARY KEY (user_id, digest),
  CONSTRAINT mfa_recovery_codes_user_fk FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Keys the service keeps, each sealed by the service (ServiceKeyStore), under a name of 1 to 32 of a-z 0-9 _ -.
CREATE TABLE IF NOT EXISTS service_keys (
  name VARCHAR(32) NOT NULL PRIMARY KEY,
  value VARCHAR(512) NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
