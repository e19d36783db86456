-- The admin API (issue 33, docs/api.md §4.27). Works on MySQL 8 and MariaDB 10.11. MySQL commits each statement on
-- its own: should this migration be cut short after its first ALTER, the rerun stops there (MySQL has no ADD COLUMN
-- IF NOT EXISTS); run the second ALTER by hand, then record the migration.

-- Who did an admin's act: the id of the admin (the event's user_id is the account acted on). NULL for every other
-- event, an operator's included. The index serves GET /admin/audit?kind=: one kind of event, newest first (InnoDB's
-- secondary indexes end with the primary key, which orders events of one millisecond).
ALTER TABLE audit_events
  ADD COLUMN actor CHAR(10) NULL,
  ADD KEY audit_events_event_time (event, occurred_at);

-- The active accounts of a role: what the last-admin rule counts and locks. A locking read of them then takes the
-- index's entries for that role only, not every account's row. The binary collation's order is the byte order, so
-- the unique keys of the e-mail and the username already serve a prefix (GET /admin/users?query=).
ALTER TABLE users ADD KEY users_role_status (role, status);
