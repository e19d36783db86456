-- Whether a session was established with a second factor (issue 32, StoredSession.secondFactor): set when the session
-- starts after one, or when one is proved in it later, and kept by every rotation. A session started before this
-- migration was established without one: FALSE. Works on MySQL 8 and MariaDB 10.11, each of which adds a column at
-- the end of the table with a constant default without copying it. One statement, committed with its record of the
-- migration apart (MySQL commits each statement on its own): should the record be what is cut short, the rerun stops
-- at the ALTER (MySQL has no ADD COLUMN IF NOT EXISTS); record the migration by hand.

ALTER TABLE sessions ADD COLUMN second_factor BOOLEAN NOT NULL DEFAULT FALSE;
