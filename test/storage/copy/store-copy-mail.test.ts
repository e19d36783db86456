import { createHash, randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { encodeCodes } from '../../../src/storage/sql/mail-rows.js'
import { CODES_PER_KEY } from '../../../src/storage/stores.js'
import { runCli } from '../../support/process.js'
import { copyForced, serversMissing, useCopyFiles } from './copy-harness.js'
import {
  type SeededStore,
  seedSqliteStore,
  undoMigration0005,
  undoMigration0007,
  undoMigration0008,
} from './seed-accounts.js'

const ACCOUNTS = 50

const { dir, url, onSqlite, copyIntoNew, copyAgain, copyEarlier, expectEarlierKept, copyThroughServers } =
  useCopyFiles('store-copy-mail')

type Row = Record<string, unknown>

/** What a copy of the SQLite store `name` must reproduce: its accounts' flags, unexpired codes, waiting messages. */
function mailRows(name: string, now: number) {
  return onSqlite(name, (connection) => ({
    users: connection.prepare('SELECT id, password_hash, email_verified FROM users ORDER BY id').all(),
    codes: connection
      .prepare('SELECT * FROM email_codes WHERE expires_at > ? ORDER BY address, purpose, user_id')
      .all(now),
    // a copied message is held by no one
    outbox: (connection.prepare('SELECT * FROM outbox ORDER BY id').all() as Row[]).map((row) => ({
      ...row,
      claimant: null,
      lease_until: 0,
    })),
    disabledWebhookUrls: connection.prepare('SELECT * FROM webhook_disabled_urls ORDER BY url_digest').all(),
  }))
}

const hex = (seed: string, length: number) =>
  createHash('sha256').update(seed).digest('hex').repeat(2).slice(0, length)

/**
 * The mail of a store in use (migrations 0005, 0007): verified accounts and one without a password, keys of codes of
 * every kind, most with several codes, some with an expired one among them (one key's every code expired: it is not
 * copied), and waiting messages, one held by a sender, some failed before, some 8 KiB.
 */
function addMail(
  name: string,
  seeded: SeededStore,
  now: number,
): { unexpiredCodes: number; messages: number } {
  return onSqlite(name, (connection) => {
    const verify = connection.prepare('UPDATE users SET email_verified = 1 WHERE id = ?')
    for (const id of seeded.ids.slice(0, 10)) verify.run(id)
    connection.prepare("UPDATE users SET password_hash = '' WHERE id = ?").run(seeded.ids[1])
    const code = connection.prepare(
      'INSERT INTO email_codes (address, purpose, user_id, codes, expires_at) VALUES (?, ?, ?, ?, ?)',
    )
    /** A key's codes: its `count` codes of `seed`, and an expired one first when `withExpired`. */
    const codes = (seed: string, count: number, withExpired: boolean) => {
      const stored = Array.from({ length: count }, (_, j) => ({
        digest: hex(`${seed} ${j}`, 64),
        expiresAt: now + 600_000 + j,
        tries: j % 4,
      }))
      if (withExpired) stored.unshift({ digest: hex(`${seed} expired`, 64), expiresAt: now - 1, tries: 2 })
      return { codes: encodeCodes(stored), expiresAt: Math.max(...stored.map((c) => c.expiresAt)) }
    }
    const purposes = ['login', 'register', 'reset_password'] as const
    for (let i = 0; i < 30; i++) {
      // several codes for most keys, up to the most a key holds
      const key = codes(`code ${i}`, 1 + (i % CODES_PER_KEY), i % 5 === 0)
      code.run(`code-${i % 11}@example.com`, purposes[i % 3], '', key.codes, key.expiresAt)
    }
    const changeKey = codes('change', 2, false)
    code.run("o'neil+é@example.com", 'change_email', seeded.ids[0], changeKey.codes, changeKey.expiresAt)
    const verifyKey = codes('verify', 1, true)
    code.run('code-0@example.com', 'verify_email', seeded.ids[2], verifyKey.codes, verifyKey.expiresAt)
    code.run('expired@example.com', 'login', '', `${hex('expired', 64)}:${now - 1}:0`, now - 1)
    const message = connection.prepare(
      `INSERT INTO outbox (id, user_id, recipient, payload, created_at, attempts, next_attempt_at, claimant, lease_until,
          code_expires_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    for (let i = 0; i < 25; i++) {
      const payload = `v1.${randomBytes(i % 5 === 0 ? 6_000 : 40).toString('base64url')}`
      message.run(
        hex(`message ${i}`, 32),
        i % 3 === 0 ? null : seeded.ids[i],
        `to-${i}@example.com`,
        payload.slice(0, 8192),
        now - 60_000 + i,
        i % 4,
        now - 1_000 + i * 10_000,
        i === 1 ? hex('claimant', 32) : null,
        i === 1 ? now + 30_000 : 0,
        // codes (migration 0008) beside notices
        i % 2 === 0 ? now + 540_000 + i : null,
      )
    }
    // webhook events for two URLs (migration 0012), one of 18 KB of UTF-8, and the disabled URLs
    const event = connection.prepare(
      `INSERT INTO outbox (id, lane, user_id, recipient, payload, created_at, attempts, next_attempt_at)
        VALUES (?, 'webhook', NULL, ?, ?, ?, ?, ?)`,
    )
    for (let i = 0; i < 5; i++) {
      const data = { user: { id: seeded.ids[i], nickname: 'Zoë 🙂'.repeat(i === 0 ? 2_000 : 1) } }
      const body = JSON.stringify({ type: 'user.updated', timestamp: new Date(now).toISOString(), data })
      event.run(hex(`event ${i}`, 32), hex(`url ${i % 2}`, 64), body, now - 30_000 + i, i % 3, now + i)
    }
    const disabled = connection.prepare(
      'INSERT INTO webhook_disabled_urls (url_digest, disabled_at) VALUES (?, ?)',
    )
    disabled.run(hex('url 1', 64), now - 5_000)
    disabled.run(hex('url 9', 64), now - 9_000)
    return { unexpiredCodes: 32, messages: 30 }
  })
}

describe('tessera store copy of the e-mail codes and the outbox (migration 0005)', () => {
  let seeded: SeededStore
  let now: number
  let expected: { unexpiredCodes: number; messages: number }

  beforeAll(async () => {
    seeded = await seedSqliteStore(join(dir.path, 'source.db'), ACCOUNTS, 10)
    now = Date.now()
    expected = addMail('source.db', seeded, now)
  })

  it('copies the flags, the unexpired codes and the waiting messages, unheld, and verifies them', async () => {
    const report = await copyIntoNew('source.db', 'target.db', 'emailCodes', expected.unexpiredCodes)
    expect(report.outbox).toMatchObject({ copied: expected.messages, source: { count: expected.messages } })
    expect(report.outbox.target).toEqual(report.outbox.source)
    // R6.5.8: the queued webhook events went with the mail, and the disabled URLs with them
    expect(report.disabledWebhookUrls).toMatchObject({ copied: 2, source: { count: 2 } })
    expect(report.disabledWebhookUrls?.target).toEqual(report.disabledWebhookUrls?.source)
    const copied = mailRows('target.db', now)
    expect(copied).toEqual(mailRows('source.db', now))
    expect(copied.codes).toHaveLength(expected.unexpiredCodes)
    expect(copied.users.filter((user) => (user as Row).email_verified === 1)).toHaveLength(10)
    expect(copied.users).toContainEqual({ id: seeded.ids[1], password_hash: '', email_verified: 1 })
  })

  it('says what it copied of them in its report', async () => {
    const { code, stdout, stderr } = await runCli([
      'store',
      'copy',
      '--from',
      url('source.db'),
      '--to',
      url('human.db'),
    ])
    expect(code, stderr).toBe(0)
    expect(stdout).toContain(
      `\ncopied ${expected.unexpiredCodes} unexpired e-mail codes and ${expected.messages} outbox messages ` +
        `(the target holds ${expected.unexpiredCodes} and ${expected.messages} of them)\n` +
        'copied 2 disabled webhook URLs (the target holds 2)\n' +
        // the second factors' line (migration 0009) after it: this store has none
        'copied 0 second factors, 0 recovery codes and 0 service keys (the target holds 0, 0 and 0 of them)\nverified: ',
    )
  })

  it('--force leaves the rows there as they are, and fails verification when one differs', async () => {
    const again = await copyAgain('source.db', 'target.db')
    expect(again.report.emailCodes).toMatchObject({ copied: 0, source: { count: expected.unexpiredCodes } })
    expect(again.report.outbox).toMatchObject({ copied: 0, source: { count: expected.messages } })
    expect(again.report.mismatch).toBeNull()

    onSqlite('target.db', (connection) =>
      connection.prepare('UPDATE outbox SET attempts = attempts + 1 WHERE id = ?').run(hex('message 3', 32)),
    )
    const differs = await copyForced(url('source.db'), url('target.db'))
    expect(differs.code).toBe(1)
    expect(differs.stderr).toMatch(
      /\ntessera store copy: verification failed: the target's outbox messages differ from the source's \(sha256 [0-9a-f]{12} against [0-9a-f]{12}\)\n$/,
    )

    onSqlite('target.db', (connection) => {
      connection.prepare('UPDATE outbox SET attempts = attempts - 1 WHERE id = ?').run(hex('message 3', 32))
      connection.prepare('UPDATE users SET email_verified = 0 WHERE id = ?').run(seeded.ids[0])
    })
    const flag = await copyForced(url('source.db'), url('target.db'))
    expect(flag.code).toBe(1)
    expect(flag.stderr).toMatch(/verification failed: the target's accounts differ from the source's/)
  })

  it('reads a store of a version before 0005 as unverified accounts without codes or outbox, and leaves it as it is', async () => {
    await copyEarlier('before-0005.db', 'after-0005.db', undoMigration0005, ['emailCodes', 'outbox'])
    onSqlite('after-0005.db', (connection) => {
      expect(connection.prepare('SELECT COUNT(*) FROM users WHERE email_verified = 0').pluck().get()).toBe(20)
      expect(connection.prepare('SELECT COUNT(*) FROM email_codes').pluck().get()).toBe(0)
    })
    expectEarlierKept('before-0005.db', 4, 'email_verified')
  })

  it('R4.14.2 reads a store of a version before 0007 as keys of one code each, the expired ones left behind', async () => {
    const at = Date.now()
    const oneCodeEach = [
      ['one@example.com', 'login', '', hex('one', 64), at + 600_000, 3],
      ['two@example.com', 'change_email', '1000000001', hex('two', 64), at + 60_000, 0],
    ] as const
    await copyEarlier(
      'before-0007.db',
      'after-0007.db',
      (connection) => {
        undoMigration0007(connection)
        const code = connection.prepare(
          'INSERT INTO email_codes (address, purpose, user_id, code_digest, expires_at, tries) VALUES (?, ?, ?, ?, ?, ?)',
        )
        for (const row of oneCodeEach) code.run(...row)
        code.run('gone@example.com', 'login', '', hex('gone', 64), at - 1, 0)
      },
      [],
    )
    const copied = onSqlite('after-0007.db', (connection) =>
      connection.prepare('SELECT * FROM email_codes ORDER BY address').all(),
    )
    expect(copied).toEqual(
      oneCodeEach.map(([address, purpose, userId, digest, expiresAt, tries]) => ({
        address,
        purpose,
        user_id: userId,
        codes: `${digest}:${expiresAt}:${tries}`,
        expires_at: expiresAt,
      })),
    )
    // the source was only read
    onSqlite('before-0007.db', (connection) => {
      expect(connection.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get()).toBe(6)
      expect(connection.prepare('SELECT COUNT(*) FROM email_codes').pluck().get()).toBe(3)
    })
  })

  it('reads the outbox of a store of a version before 0008 as messages none known to be a code, and leaves it as it is', async () => {
    await copyEarlier(
      'before-0008.db',
      'after-0008.db',
      (connection) => {
        undoMigration0008(connection)
        connection
          .prepare(
            `INSERT INTO outbox (id, user_id, recipient, payload, created_at, attempts, next_attempt_at)
            VALUES (?, NULL, 'early@example.com', 'v1.early', ?, 1, ?)`,
          )
          .run(hex('early', 32), now - 60_000, now)
      },
      [],
    )
    const early = { id: hex('early', 32), recipient: 'early@example.com', attempts: 1, code_expires_at: null }
    onSqlite('after-0008.db', (connection) => {
      expect(connection.prepare('SELECT * FROM outbox').all()).toEqual([
        expect.objectContaining({ ...early, claimant: null, lease_until: 0 }),
      ])
    })
    onSqlite('before-0008.db', (connection) => {
      expect(connection.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get()).toBe(7)
      expect(connection.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('outbox')).not.toContain(
        'code_expires_at',
      )
    })
  })

  it.skipIf(serversMissing)(
    'SQLite to PostgreSQL to MariaDB and back to SQLite: every row as it was',
    async () => {
      await copyThroughServers('source.db', 'back.db', (report) => {
        expect(report.emailCodes).toMatchObject({ copied: expected.unexpiredCodes })
        expect(report.emailCodes.target).toEqual(report.emailCodes.source)
        expect(report.outbox).toMatchObject({ copied: expected.messages })
        expect(report.outbox.target).toEqual(report.outbox.source)
        expect(report.disabledWebhookUrls).toMatchObject({ copied: 2 })
      })
      expect(mailRows('back.db', now)).toEqual(mailRows('source.db', now))
    },
    90_000,
  )
})
