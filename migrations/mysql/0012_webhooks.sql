-- Webhooks (issue 33, docs/api.md §6.5): the outbox becomes one delivery queue with two lanes, `mail` (SMTP) and
-- `webhook` (HTTP), each claimed on its own so that a slow mail server never holds events back, nor the reverse. A
-- webhook message is one event for one URL: its recipient is the SHA-256 (hex) of that URL, never the URL, which may
-- carry credentials; its user_id is NULL, so that an account's deletion never removes an event about it. Every
-- message queued before this migration is mail. Works on MySQL 8 and MariaDB 10.11. MySQL commits each statement on
-- its own, so a run cut short starts again from the top: the table may be there already (IF NOT EXISTS), and the
-- ALTER, which cannot be written to run twice alike, comes last.

-- The webhook URLs a receiver answered 410 Gone (docs/api.md R6.5.5): no event is sent to them until `tessera webhooks
-- enable <url>` removes the row. Keyed by the URL's SHA-256 (hex), as the outbox's recipient.
CREATE TABLE IF NOT EXISTS webhook_disabled_urls (
  url_digest CHAR(64) NOT NULL PRIMARY KEY,
  disabled_at BIGINT NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- One ALTER: the column and its indexes come together or not at all. outbox_due serves an idle poll and the claim of
-- the webhook lane (each lane's due messages, the longest due first); outbox_lanes the mail lane's two orders, each
-- from one end (InnoDB's secondary indexes end with the primary key), as before, now within the lane.
ALTER TABLE outbox
  ADD COLUMN lane VARCHAR(16) NOT NULL DEFAULT 'mail',
  DROP KEY outbox_due,
  ADD KEY outbox_due (lane, next_attempt_at),
  DROP KEY outbox_lanes,
  ADD KEY outbox_lanes (lane, code_expires_at, next_attempt_at);
