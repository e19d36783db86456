-- Whether a session was established with a second factor (issue 32, StoredSession.secondFactor): set when the session
-- starts after one, or when one is proved in it later, and kept by every rotation. A session started before this
-- migration was established without one: 0.

ALTER TABLE sessions ADD COLUMN second_factor INTEGER NOT NULL DEFAULT 0 CHECK (second_factor IN (0, 1));
