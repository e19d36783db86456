import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { copyForced, serversMissing, useCopyFiles } from './copy-harness.js'
import { fullSession, type SeededStore, seedSqliteStore, undoMigration0010 } from './seed-accounts.js'

const ACCOUNTS = 40

const { dir, url, onSqlite, copyIntoNew, copyEarlier, copyThroughServers } =
  useCopyFiles('store-copy-sessions')

type Row = Record<string, unknown>

/** The sessions of the SQLite store `name` that have not expired, every column, in id order. */
const sessionRows = (name: string) =>
  onSqlite(
    name,
    (connection) =>
      connection.prepare('SELECT * FROM sessions WHERE expires_at > ? ORDER BY id').all(Date.now()) as Row[],
  )

describe('tessera store copy of the sessions’ second-factor flag (migration 0010)', () => {
  let seeded: SeededStore
  let unexpired: number

  beforeAll(async () => {
    seeded = await seedSqliteStore(join(dir.path, 'source.db'), ACCOUNTS, 10)
    unexpired = ACCOUNTS - seeded.expiredSessions
  })

  it('copies every session with its flag, verified; a flag that differs fails verification', async () => {
    await copyIntoNew('source.db', 'target.db', 'sessions', unexpired)
    const copied = sessionRows('target.db')
    expect(copied).toEqual(sessionRows('source.db'))
    // both values are there to copy
    expect(new Set(copied.map((row) => row.second_factor))).toEqual(new Set([0, 1]))
    expect(fullSession(4) && !seeded.expired(4)).toBe(true)

    onSqlite('target.db', (connection) =>
      connection.prepare('UPDATE sessions SET second_factor = 0 WHERE user_id = ?').run(seeded.ids[4]),
    )
    const forced = await copyForced(url('source.db'), url('target.db'))
    expect(forced.code).toBe(1)
    expect(forced.stderr).toMatch(
      /\ntessera store copy: verification failed: the target's sessions differ from the source's \(sha256 [0-9a-f]{12} against [0-9a-f]{12}\)\n$/,
    )
  })

  it('reads the sessions of a store of a version before 0010 as established without a second factor, and leaves it as it is', async () => {
    await copyEarlier('before-0010.db', 'after-0010.db', undoMigration0010, [])
    const copied = sessionRows('after-0010.db')
    expect(copied.length).toBeGreaterThan(0)
    expect(copied.map((row) => row.second_factor)).toEqual(copied.map(() => 0))
    onSqlite('before-0010.db', (connection) => {
      expect(connection.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get()).toBeLessThan(10)
      expect(
        connection.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('sessions'),
      ).not.toContain('second_factor')
    })
  })

  it.skipIf(serversMissing)(
    'SQLite to PostgreSQL to MariaDB and back to SQLite: every session as it was, its flag too',
    async () => {
      await copyThroughServers('source.db', 'back.db', (report) => {
        expect(report.sessions).toMatchObject({ copied: unexpired })
        expect(report.sessions.target).toEqual(report.sessions.source)
      })
      expect(sessionRows('back.db')).toEqual(sessionRows('source.db'))
    },
    90_000,
  )
})
