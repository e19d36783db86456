-- The flood bound of the audit trail (docs/api.md R6.3.4): an `events_omitted` row counts, in `omitted`, the events
-- of one kind a client can cause at will (its `reason`: unknown_email, throttled, invalid, replayed) that one
-- process left out of the trail in one minute. NULL on every other row.
ALTER TABLE audit_events ADD COLUMN omitted INTEGER;
