-- The admin API (issue 33, docs/api.md §4.27).

-- Who did an admin's act: the id of the admin (the event's user_id is the account acted on). NULL for every other
-- event, an operator's included. A nullable column without a default: added without rewriting the table.
ALTER TABLE audit_events ADD COLUMN actor CHAR(10);

-- GET /admin/audit?kind=: one kind of event, newest first (id orders events of one millisecond)
CREATE INDEX audit_events_event_time ON audit_events (event, occurred_at, id);

-- The active accounts of a role, in id order: what the last-admin rule counts and locks (the guarded writes lock
-- them in this order, so that two of them wait for each other instead of deadlocking)
CREATE INDEX users_role_status ON users (role, status, id);

-- GET /admin/users?query=: a prefix of the e-mail address or of the username is a range of the byte order, which the
-- unique indexes serve only in a database whose collation is C; these serve it in any
CREATE INDEX users_email_bytes ON users (email COLLATE "C");
CREATE INDEX users_username_bytes ON users (username COLLATE "C");
