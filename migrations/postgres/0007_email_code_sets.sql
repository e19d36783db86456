-- Several codes per key (issue 31, docs/api.md R4.14.2): a code no longer replaces the one sent before it to the same
-- address for the same purpose; each is good for its own time and tries. A key is still one row, its codes in one
-- column, so that a try at all of them is one write of one row (src/storage/sql/sql-email-code-store.ts):
-- `<digest>:<expires at>:<tries>` each, oldest first, separated by commas, at most ten (849 characters). expires_at
-- becomes when the last of them expires. The code a row held is carried over as the first of its list.
ALTER TABLE email_codes ADD COLUMN codes VARCHAR(1024) NOT NULL DEFAULT '';

UPDATE email_codes SET codes = code_digest || ':' || expires_at || ':' || tries;

ALTER TABLE email_codes DROP COLUMN code_digest, DROP COLUMN tries, ALTER COLUMN codes DROP DEFAULT;
