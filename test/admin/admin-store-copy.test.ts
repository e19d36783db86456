import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { serversMissing, useCopyFiles } from '../storage/copy/copy-harness.js'
import { type SeededStore, seedSqliteStore, undoMigration0011 } from '../storage/copy/seed-accounts.js'
import { runCli } from '../support/process.js'

const ACCOUNTS = 20
const EVENTS = 30

const { dir, url, onSqlite, copyEarlier, expectEarlierKept, copyThroughServers } =
  useCopyFiles('admin-store-copy')

/** The audit trail of the SQLite store `name`, every column but the id, in the order it was stored. */
function auditRows(name: string) {
  return onSqlite(name, (connection) =>
    connection
      .prepare(
        'SELECT occurred_at, event, user_id, client_address, request_id, reason, omitted, actor FROM audit_events ORDER BY id',
      )
      .all(),
  )
}

/** Events of admins' acts (an actor each) among others (none), in the SQLite store `name`. */
function addEvents(name: string, seeded: SeededStore, now: number) {
  onSqlite(name, (connection) => {
    const insert = connection.prepare(
      `INSERT INTO audit_events (occurred_at, event, user_id, client_address, request_id, reason, omitted, actor)
        VALUES (?, ?, ?, ?, ?, ?, NULL, ?)`,
    )
    for (let i = 0; i < EVENTS; i++) {
      const admin = i % 3 === 0
      insert.run(
        now - i,
        admin ? 'account_disabled' : 'login_succeeded',
        seeded.ids[i % ACCOUNTS],
        '203.0.113.5',
        `req-${i}`,
        admin ? 'admin' : null,
        admin ? seeded.ids[(i + 1) % ACCOUNTS] : null,
      )
    }
  })
}

/** docs/api.md §2.4 and R6.3.1: `tessera store copy` carries the audit trail's actors (migration 0011). */
describe('tessera store copy of the audit trail’s actors (migration 0011)', () => {
  beforeAll(async () => {
    const seeded = await seedSqliteStore(join(dir.path, 'source.db'), ACCOUNTS, 10)
    addEvents('source.db', seeded, Date.now())
  })

  it('copies every event with its actor, verified', async () => {
    const { code, stdout, stderr } = await runCli([
      'store',
      'copy',
      '--json',
      '--from',
      url('source.db'),
      '--to',
      url('target.db'),
    ])
    expect(code, stderr).toBe(0)
    const report = JSON.parse(stdout)
    expect(report.mismatch).toBeNull()
    expect(report.auditEvents).toEqual({
      copied: EVENTS,
      notCopied: null,
      source: { count: EVENTS, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
      target: report.auditEvents.source,
    })
    const rows = auditRows('target.db')
    expect(rows).toEqual(auditRows('source.db'))
    expect(rows.filter((row) => (row as { actor: string | null }).actor !== null)).toHaveLength(EVENTS / 3)
  })

  it.skipIf(serversMissing)(
    'through PostgreSQL and MariaDB and back: the same events, the same actors',
    async () => {
      await copyThroughServers('source.db', 'back.db', (report) => {
        expect(report.auditEvents).toMatchObject({ source: { count: EVENTS } })
        expect(report.auditEvents.target).toEqual(report.auditEvents.source)
      })
      expect(auditRows('back.db')).toEqual(auditRows('source.db'))
    },
  )

  it('a store of the version before 0011 is copied, its events without actors, and left as it was', async () => {
    await copyEarlier('before-0011.db', 'after-0011.db', undoMigration0011, [])
    expectEarlierKept('before-0011.db', 10, 'no_such_column')
    const rows = auditRows('after-0011.db') as Array<{ actor: string | null }>
    expect(rows.every((row) => row.actor === null)).toBe(true)
  })
})
