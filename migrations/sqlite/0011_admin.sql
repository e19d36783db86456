-- The admin API (issue 33, docs/api.md §4.27).

-- Who did an admin's act: the id of the admin (the event's user_id is the account acted on). NULL for every other
-- event, an operator's included.
ALTER TABLE audit_events ADD COLUMN actor TEXT CHECK (length(actor) = 10);

-- GET /admin/audit?kind=: one kind of event, newest first (the rowid ends the index, ordering events of one millisecond)
CREATE INDEX audit_events_event_time ON audit_events (event, occurred_at);

-- The active accounts of a role: what the last-admin rule counts (UserStore.countActive and the guarded writes)
CREATE INDEX users_role_status ON users (role, status);
