-- Webhooks (issue 33, docs/api.md §6.5): the outbox becomes one delivery queue with two lanes, `mail` (SMTP) and
-- `webhook` (HTTP), each claimed on its own so that a slow mail server never holds events back, nor the reverse. A
-- webhook message is one event for one URL: its recipient is the SHA-256 (hex) of that URL, never the URL, which may
-- carry credentials; its user_id is NULL, so that an account's deletion never removes an event about it. Every
-- message queued before this migration is mail.

ALTER TABLE outbox ADD COLUMN lane TEXT NOT NULL DEFAULT 'mail' CHECK (lane IN ('mail', 'webhook'));

-- an idle poll, and the claim of the webhook lane: each lane's due messages, the longest due first
DROP INDEX outbox_due;
CREATE INDEX outbox_due ON outbox (lane, next_attempt_at, id);

-- the mail lane's claim of what is not a code, the longest due first (the codes keep outbox_codes: only mail has them)
DROP INDEX outbox_others;
CREATE INDEX outbox_others ON outbox (next_attempt_at, id) WHERE code_expires_at IS NULL AND lane = 'mail';

-- The webhook URLs a receiver answered 410 Gone (docs/api.md R6.5.5): no event is sent to them until `tessera webhooks
-- enable <url>` removes the row. Keyed by the URL's SHA-256 (hex), as the outbox's recipient. WITHOUT ROWID: looked
-- up by its text key only.
CREATE TABLE webhook_disabled_urls (
  url_digest TEXT NOT NULL PRIMARY KEY CHECK (length(url_digest) = 64),
  disabled_at INTEGER NOT NULL
) WITHOUT ROWID;
