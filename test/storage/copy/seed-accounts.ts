import { createHash, randomBytes } from 'node:crypto'
import { hash } from '@node-rs/argon2'
import { expect } from 'vitest'
import { systemClock } from '../../../src/clock.js'
import { migrate } from '../../../src/storage/sql/migrate.js'
import { loadBetterSqlite3 } from '../../../src/storage/sqlite/better-sqlite3.js'
import { openSqliteDatabase } from '../../../src/storage/sqlite/sqlite-database.js'
import { type Backend, backends } from '../../support/backends.js'
import { call } from '../../support/http.js'
import { startTestService, TEST_ENV } from '../../support/test-service.js'

export const SEED_PASSWORD = 'seeded password 1'

export interface SeededStore {
  /** The accounts in insertion order: the i-th has the e-mail seedEmail(i). */
  ids: string[]
  /** How many of them got an expired session (the others an unexpired one). */
  expiredSessions: number
  /** Whether the i-th account's seeded session has expired. */
  expired(index: number): boolean
}

/** Every how many seeded sessions one has every field set. */
const SESSION_FIELDS_EVERY = 4

/** Whether the i-th seeded account's session has every field set (a device, a network, a rotation). */
export const fullSession = (index: number) => index % SESSION_FIELDS_EVERY === 0

export const seedEmail = (index: number) => `user${String(index).padStart(6, '0')}@example.com`

/**
 * `count` accounts written straight into the SQLite file (migrated first), all with one Argon2id hash of
 * SEED_PASSWORD at the tests' cheap parameters, in one transaction: a second or two for 100,000. Each has a session
 * as a login in the default mode stores it (slot 'single'; a digest no token matches) expiring in a day; every
 * `expiredEvery`-th one has expired. Every SESSION_FIELDS_EVERY-th was established with a second factor and has
 * been refreshed from a known device and network, so it has every field set (fullSession); the others are as
 * migration 0004 makes a refresh token of an earlier version into a session (no device, address, rotation or second
 * factor), which keeps the rows as narrow as most are right after an upgrade, and the copy of 100,000 about as fast
 * as it was before sessions.
 */
export async function seedSqliteStore(file: string, count: number, expiredEvery = 100): Promise<SeededStore> {
  const database = openSqliteDatabase(file)
  try {
    await migrate(database, systemClock)
  } finally {
    await database.close()
  }
  const passwordHash = await hash(SEED_PASSWORD, {
    algorithm: 2,
    memoryCost: Number(TEST_ENV.AUTH_ARGON2_MEMORY_KIB),
    timeCost: Number(TEST_ENV.AUTH_ARGON2_TIME_COST),
    parallelism: 1,
  })
  const ids = distinctIds(count)
  const now = Date.now()
  const BetterSqlite3 = loadBetterSqlite3()
  const connection = new BetterSqlite3(file)
  let expiredSessions = 0
  const expired = (index: number) => index % expiredEvery === expiredEvery - 1
  try {
    connection.pragma('journal_mode = WAL')
    const insertUser = connection.prepare(
      'INSERT INTO users (id, email, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
    )
    const insertSession = connection.prepare(
      `INSERT INTO sessions (id, user_id, slot, token_digest, expires_at, created_at, last_used_at, device,
        client_address, previous_digest, rotated_at, second_factor) VALUES (?, ?, 'single', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    connection.transaction(() => {
      ids.forEach((id, index) => {
        const createdAt = new Date(now - index * 1000).toISOString()
        insertUser.run(id, seedEmail(index), passwordHash, createdAt, createdAt)
        if (expired(index)) expiredSessions += 1
        const digest = createHash('sha256').update(`${id}-${index}`).digest('hex')
        const full = fullSession(index)
        insertSession.run(
          digest.slice(0, 32),
          id,
          digest,
          expired(index) ? now - 60_000 : now + 86_400_000,
          now - 3_600_000,
          full ? now - index : now - 3_600_000,
          full ? `Firefox on Linux ${index % 7}` : '',
          full ? `198.51.${index % 256}.0/24` : null,
          full ? createHash('sha256').update(`${id}-${index}-before`).digest('hex') : null,
          full ? now - index : null,
          full ? 1 : 0,
        )
      })
    })()
  } finally {
    connection.close()
  }
  return { ids, expiredSessions, expired }
}

/**
 * Turns a seeded SQLite store (`connection`, open on it) into one as the versions before 0012 left it: an outbox
 * without lanes (mail only, indexed as before) and no disabled webhook URLs, and no record of 0012.
 */
export function undoMigration0012(connection: { exec(sql: string): unknown }): void {
  connection.exec(`
    DROP TABLE webhook_disabled_urls;
    DROP INDEX outbox_due;
    DROP INDEX outbox_others;
    ALTER TABLE outbox DROP COLUMN lane;
    CREATE INDEX outbox_due ON outbox (next_attempt_at, id);
    CREATE INDEX outbox_others ON outbox (next_attempt_at, id) WHERE code_expires_at IS NULL;
    DELETE FROM schema_migrations WHERE version = 12`)
}

/**
 * Turns a seeded SQLite store (`connection`, open on it) into one as the versions before 0011 left it: an audit trail
 * without actors, neither index of 0011, and no record of 0011.
 */
export function undoMigration0011(connection: { exec(sql: string): unknown }): void {
  undoMigration0012(connection)
  connection.exec(`
    DROP INDEX audit_events_event_time;
    DROP INDEX users_role_status;
    ALTER TABLE audit_events DROP COLUMN actor;
    DELETE FROM schema_migrations WHERE version = 11`)
}

/**
 * Turns a seeded SQLite store (`connection`, open on it) into one as the versions before 0010 left it: sessions
 * without the second-factor flag, and no record of 0010 (nor 0011's and 0012's changes).
 */
export function undoMigration0010(connection: { exec(sql: string): unknown }): void {
  undoMigration0011(connection)
  connection.exec(`
    ALTER TABLE sessions DROP COLUMN second_factor;
    DELETE FROM schema_migrations WHERE version = 10`)
}

/**
 * Turns a seeded SQLite store (`connection`, open on it) into one as version 8 left it: without the second factors,
 * recovery codes and service keys, and no record of 0009 (nor 0010's change).
 */
export function undoMigration0009(connection: { exec(sql: string): unknown }): void {
  undoMigration0010(connection)
  connection.exec(`
    DROP TABLE mfa_factors;
    DROP TABLE mfa_recovery_codes;
    DROP TABLE service_keys;
    DELETE FROM schema_migrations WHERE version = 9`)
}

/**
 * Turns a seeded SQLite store (`connection`, open on it) into one as the version before 0008 left it: an outbox
 * without the codes' expiries, and no record of 0008 (nor of 0009's tables and 0010's change).
 */
export function undoMigration0008(connection: { exec(sql: string): unknown }): void {
  undoMigration0009(connection)
  connection.exec(`
    DROP INDEX outbox_others;
    DROP INDEX outbox_codes;
    ALTER TABLE outbox DROP COLUMN code_expires_at;
    DELETE FROM schema_migrations WHERE version = 8`)
}

/**
 * Turns a seeded SQLite store (`connection`, open on it, holding no e-mail codes) into one as version 6 left it: one
 * code per key in `email_codes` (code_digest, tries), and no record of migration 0007 (nor 0008's change).
 */
export function undoMigration0007(connection: { exec(sql: string): unknown }): void {
  undoMigration0008(connection)
  connection.exec(`
    DROP TABLE email_codes;
    CREATE TABLE email_codes (
      address TEXT NOT NULL,
      purpose TEXT NOT NULL,
      user_id TEXT NOT NULL,
      code_digest TEXT NOT NULL CHECK (length(code_digest) = 64),
      expires_at INTEGER NOT NULL,
      tries INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (address, purpose, user_id)
    ) WITHOUT ROWID;
    CREATE INDEX email_codes_user ON email_codes (user_id);
    CREATE INDEX email_codes_expiry ON email_codes (expires_at);
    DELETE FROM schema_migrations WHERE version = 7`)
}

/**
 * Turns a seeded SQLite store (`connection`, open on it) into one as version 5 left it: without the changes of
 * migrations 0006 and later, and without their records.
 */
export function undoMigration0006(connection: { exec(sql: string): unknown }): void {
  undoMigration0007(connection)
  connection.exec(`
    DROP TABLE avatars;
    DROP TABLE oauth_accounts;
    DROP TABLE oauth_tickets;
    DROP INDEX users_username;
    ALTER TABLE users DROP COLUMN username;
    ALTER TABLE users DROP COLUMN nickname;
    ALTER TABLE users DROP COLUMN bio;
    ALTER TABLE users DROP COLUMN role;
    ALTER TABLE users DROP COLUMN status;
    ALTER TABLE users DROP COLUMN updated_at;
    DELETE FROM schema_migrations WHERE version = 6`)
}

/**
 * Turns a seeded SQLite store (`connection`, open on it) into one as version 4 left it: without the columns and
 * tables of migrations 0006 and 0005, and without their records.
 */
export function undoMigration0005(connection: { exec(sql: string): unknown }): void {
  undoMigration0006(connection)
  connection.exec(`
    DROP TABLE email_codes;
    DROP TABLE outbox;
    DROP TABLE rate_counters;
    ALTER TABLE users DROP COLUMN email_verified;
    DELETE FROM schema_migrations WHERE version = 5`)
}

/** `count` distinct random user ids: 10 digits, the first not 0. */
function distinctIds(count: number): string[] {
  const ids = new Set<string>()
  while (ids.size < count) {
    const bytes = randomBytes(8 * (count - ids.size))
    for (let offset = 0; offset + 8 <= bytes.length && ids.size < count; offset += 8) {
      ids.add(String(1_000_000_000 + Number(bytes.readBigUInt64BE(offset) % 9_000_000_000n)))
    }
  }
  return [...ids]
}

/**
 * Logs in the seeded accounts `indexes` through the service on the SQLite store `databaseUrl` (with `dataDir`), as
 * their users would before a copy; resolves with the refresh token each was given, by index.
 */
export async function loginSeeded(
  databaseUrl: string,
  dataDir: string,
  indexes: readonly number[],
): Promise<Map<number, string>> {
  const sqlite = backends.find((candidate) => candidate.name === 'sqlite') as Backend
  const instance = { env: { DATABASE_URL: databaseUrl, DATA_DIR: dataDir }, teardown: async () => {} }
  const service = await startTestService(sqlite, { instance })
  const tokens = new Map<number, string>()
  try {
    for (const index of indexes) {
      const login = await call(service.app, 'POST', '/auth/login', {
        body: { email: seedEmail(index), password: SEED_PASSWORD },
      })
      expect(login.status, login.text).toBe(200)
      tokens.set(index, login.body.data.refresh_token)
    }
  } finally {
    await service.close()
  }
  return tokens
}
