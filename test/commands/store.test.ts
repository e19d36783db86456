import { createHash } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { loadBetterSqlite3 } from '../../src/storage/sqlite/better-sqlite3.js'
import { copyForced } from '../storage/copy/copy-harness.js'
import { seedSqliteStore, undoMigration0005 } from '../storage/copy/seed-accounts.js'
import { runCli } from '../support/process.js'
import { useTempDir } from '../support/temp-dir.js'

const dir = useTempDir('store-command')
const url = (name: string) => `sqlite:${join(dir.path, name)}`

/** Exactly one line on stderr, nothing on stdout. */
function expectOneLine(
  result: { code: number | null; stdout: string; stderr: string },
  code: number,
  line: RegExp,
) {
  expect(result.code, result.stderr).toBe(code)
  expect(result.stdout).toBe('')
  expect(result.stderr.split('\n')).toHaveLength(2)
  expect(result.stderr).toMatch(line)
}

describe('tessera store: usage', () => {
  it('answers 2 with the usage for a missing subcommand, missing URLs, a bad batch size or URL', async () => {
    for (const args of [
      ['store'],
      ['store', 'move'],
      ['store', 'copy', '--to', 'sqlite:x.db'],
      ['store', 'copy', '--from', 'sqlite:a.db', '--to', 'sqlite:b.db', '--batch-size', '0'],
      ['store', 'copy', '--from', 'sqlite:a.db', '--to', 'sqlite:b.db', '--batch-size', '5001'],
      ['store', 'copy', '--from', 'http://example.com/', '--to', 'sqlite:b.db'],
      ['store', 'copy', '--from', 'sqlite:a.db', '--to', 'sqlite:b.db', '--redis-to', 'http://x/'],
      ['store', 'copy', '--from', 'sqlite:a.db', '--to', 'sqlite:b.db', '--bogus'],
      ['store', 'backup'],
    ]) {
      const result = await runCli(args)
      expect(result.code, args.join(' ')).toBe(2)
      expect(result.stderr).toMatch(/^tessera store: .+\nUsage:\n/)
    }
    const help = await runCli(['store', '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/^Usage:\n {2}tessera store copy --from <DATABASE_URL> --to <DATABASE_URL>/)
  }, 90_000)
})

describe('tessera store copy: refusals and verification', () => {
  beforeAll(async () => {
    await seedSqliteStore(join(dir.path, 'source.db'), 500, 10)
    writeFileSync(join(dir.path, 'not-a-store.db'), '')
    // three events in the source's audit trail, as the service writes them
    const BetterSqlite3 = loadBetterSqlite3()
    const source = new BetterSqlite3(join(dir.path, 'source.db'))
    try {
      const insert = source.prepare(
        'INSERT INTO audit_events (occurred_at, event, user_id, client_address, request_id, reason) VALUES (?, ?, ?, ?, ?, ?)',
      )
      insert.run(Date.now() - 3000, 'login_failed', null, '192.0.2.1', 'req-1', 'unknown_email')
      insert.run(Date.now() - 2000, 'login_succeeded', '1234567890', '192.0.2.1', 'req-2', null)
      insert.run(Date.now() - 1000, 'logout', '1234567890', null, null, null)
    } finally {
      source.close()
    }
  })

  it('refuses, with one line and nothing written, a missing source, the same store twice, an unreachable target', async () => {
    expectOneLine(
      await runCli(['store', 'copy', '--from', url('missing.db'), '--to', url('target.db')]),
      1,
      /^tessera store copy: --from names no SQLite file: .*missing\.db does not exist\n$/,
    )
    expectOneLine(
      await runCli(['store', 'copy', '--from', url('source.db'), '--to', `sqlite:${dir.path}/./source.db`]),
      1,
      /^tessera store copy: --from and --to name the same store\n$/,
    )
    expectOneLine(
      await runCli(['store', 'copy', '--from', url('not-a-store.db'), '--to', url('target.db')]),
      1,
      /^tessera store copy: --from holds no Tessera store \(no users table\)\n$/,
    )
    expectOneLine(
      await runCli([
        'store',
        'copy',
        '--from',
        url('source.db'),
        '--to',
        'postgres://postgres@127.0.0.1:1/none',
      ]),
      1,
      /^tessera store copy: --to could not be reached: .+\n$/,
    )
    const { existsSync } = await import('node:fs')
    expect(existsSync(join(dir.path, 'target.db'))).toBe(false)
  }, 90_000)

  it('copies the audit trail of a store of an earlier version, without the omitted column, as NULL counts', async () => {
    const file = join(dir.path, 'before-0003.db')
    await seedSqliteStore(file, 20, 10)
    const BetterSqlite3 = loadBetterSqlite3()
    const old = new BetterSqlite3(file)
    try {
      // the store as a version before migration 0003 left it
      old.exec(
        'ALTER TABLE audit_events DROP COLUMN omitted; DELETE FROM schema_migrations WHERE version = 3',
      )
      old
        .prepare(
          'INSERT INTO audit_events (occurred_at, event, user_id, client_address, request_id, reason) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .run(Date.now(), 'login_failed', null, '192.0.2.1', 'req-1', 'unknown_email')
    } finally {
      old.close()
    }
    const result = await runCli([
      'store',
      'copy',
      '--json',
      '--from',
      `sqlite:${file}`,
      '--to',
      url('after-0003.db'),
    ])
    expect(result.code, result.stderr).toBe(0)
    const report = JSON.parse(result.stdout)
    expect(report.auditEvents).toMatchObject({ copied: 1, notCopied: null, source: { count: 1 } })
    expect(report.auditEvents.target).toEqual(report.auditEvents.source)
    expect(report.mismatch).toBeNull()
  })

  it('copies every session of an account, every field of each, and the slot that keeps one in single mode', async () => {
    const file = join(dir.path, 'devices.db')
    const seeded = await seedSqliteStore(file, 20, 10)
    const BetterSqlite3 = loadBetterSqlite3()
    const source = new BetterSqlite3(file)
    const now = Date.now()
    try {
      // three devices of the first account beside its seeded session, as the per-device mode keeps them
      const insert = source.prepare(
        `INSERT INTO sessions (id, user_id, slot, token_digest, expires_at, created_at, last_used_at, device,
          client_address, previous_digest, rotated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      for (const [n, device, address, rotatedAt] of [
        [1, 'Safari on iOS', '2001:db8:1::/48', now - 10],
        [2, `a "quoted", 'odd' device: é 🦊`, null, null],
        [3, '', '192.0.2.0/24', now - 20],
      ] as const) {
        const id = String(n).repeat(32)
        insert.run(
          id,
          seeded.ids[0],
          id,
          String(n).repeat(64),
          now + 3_600_000,
          now - 1000,
          now - n,
          device,
          address,
          rotatedAt === null ? null : 'f'.repeat(64),
          rotatedAt,
        )
      }
    } finally {
      source.close()
    }
    const result = await runCli([
      'store',
      'copy',
      '--json',
      '--from',
      `sqlite:${file}`,
      '--to',
      url('devices-copy.db'),
    ])
    expect(result.code, result.stderr).toBe(0)
    const report = JSON.parse(result.stdout)
    expect(report.sessions.copied).toBe(20 - seeded.expiredSessions + 3)
    expect(report.sessions.target).toEqual(report.sessions.source)
    expect(report.mismatch).toBeNull()
    // the rows themselves, slot included
    const rows = (path: string) => {
      const connection = new BetterSqlite3(path, { readonly: true })
      try {
        return connection.prepare('SELECT * FROM sessions WHERE expires_at > ? ORDER BY id').all(now)
      } finally {
        connection.close()
      }
    }
    expect(rows(join(dir.path, 'devices-copy.db'))).toEqual(rows(file))
    expect(rows(file)).toHaveLength(20 - seeded.expiredSessions + 3)
  })

  it('reads a store of a version before sessions, its refresh tokens as sessions, and leaves it as it is', async () => {
    const file = join(dir.path, 'before-0004.db')
    const seeded = await seedSqliteStore(file, 20, 10)
    const BetterSqlite3 = loadBetterSqlite3()
    const old = new BetterSqlite3(file)
    try {
      // the store as a version before migration 0004 left it: one refresh token per account
      undoMigration0005(old)
      old.exec(`
        CREATE TABLE refresh_tokens (
          user_id TEXT NOT NULL PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
          token_digest TEXT NOT NULL,
          expires_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        INSERT INTO refresh_tokens SELECT user_id, token_digest, expires_at FROM sessions;
        DROP TABLE sessions;
        DELETE FROM schema_migrations WHERE version = 4`)
    } finally {
      old.close()
    }
    const result = await runCli([
      'store',
      'copy',
      '--json',
      '--from',
      `sqlite:${file}`,
      '--to',
      url('after-0004.db'),
    ])
    expect(result.code, result.stderr).toBe(0)
    const report = JSON.parse(result.stdout)
    expect(report.sessions.copied).toBe(20 - seeded.expiredSessions)
    expect(report.sessions.target).toEqual(report.sessions.source)
    expect(report.mismatch).toBeNull()
    const target = new BetterSqlite3(join(dir.path, 'after-0004.db'), { readonly: true })
    const source = new BetterSqlite3(file, { readonly: true })
    try {
      const [session] = target
        .prepare('SELECT id, slot, token_digest, device, previous_digest FROM sessions WHERE user_id = ?')
        .all(seeded.ids[0]) as Array<Record<string, unknown>>
      const digest = String(session?.token_digest)
      expect(session).toEqual({
        // the id a refresh token of an earlier version reads as, in SQL as in Redis (session-record.ts)
        id: createHash('sha1').update(digest).digest('hex').slice(0, 32),
        slot: 'single',
        token_digest: digest,
        device: '',
        previous_digest: null,
      })
      // the source is only read: never migrated
      expect(source.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get()).toBe(3)
    } finally {
      target.close()
      source.close()
    }
  })

  it('--force copies into a store that holds the accounts already, and fails verification when one differs', async () => {
    const first = await runCli([
      'store',
      'copy',
      '--json',
      '--from',
      url('source.db'),
      '--to',
      url('forced.db'),
    ])
    expect(first.code, first.stderr).toBe(0)
    const copied = JSON.parse(first.stdout).auditEvents
    expect(copied).toMatchObject({ copied: 3, notCopied: null, source: { count: 3 } })
    expect(copied.target).toEqual(copied.source)

    const refused = await runCli(['store', 'copy', '--from', url('source.db'), '--to', url('forced.db')])
    expectOneLine(
      refused,
      1,
      /^tessera store copy: the target already holds accounts; --resume .+ --force .+\n$/,
    )

    const same = await runCli([
      'store',
      'copy',
      '--json',
      '--force',
      '--from',
      url('source.db'),
      '--to',
      url('forced.db'),
    ])
    expect(same.code, same.stderr).toBe(0)
    const report = JSON.parse(same.stdout)
    expect(report.accounts).toMatchObject({ copied: 0, alreadyThere: 500, targetTotal: 500 })
    expect(report.mismatch).toBeNull()
    // the target's own audit trail is left as it is
    expect(report.auditEvents).toMatchObject({
      copied: 0,
      notCopied: 'the target holds audit events of its own',
    })

    // one account changed in the target (its password hash): the checksums differ
    const BetterSqlite3 = loadBetterSqlite3()
    const target = new BetterSqlite3(join(dir.path, 'forced.db'))
    try {
      target
        .prepare("UPDATE users SET password_hash = 'changed' WHERE id = (SELECT MIN(id) FROM users)")
        .run()
    } finally {
      target.close()
    }
    const differs = await copyForced(url('source.db'), url('forced.db'))
    expect(differs.code).toBe(1)
    // after the progress lines (stderr is no terminal), one line says why
    expect(differs.stderr).toMatch(
      /\ntessera store copy: verification failed: the target's accounts differ from the source's \(sha256 [0-9a-f]{12} against [0-9a-f]{12}\)\n$/,
    )
  }, 90_000)
})
