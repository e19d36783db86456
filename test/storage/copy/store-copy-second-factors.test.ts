import { createHash, randomBytes } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../../support/process.js'
import { copyForced, serversMissing, useCopyFiles } from './copy-harness.js'
import { type SeededStore, seedSqliteStore, undoMigration0009 } from './seed-accounts.js'

const ACCOUNTS = 40

const { dir, url, onSqlite, copyIntoNew, copyAgain, copyEarlier, copyThroughServers } =
  useCopyFiles('store-copy-second-factors')

/** What a copy of the SQLite store `name` must reproduce: every factor, recovery code and service key, as stored. */
function factorRows(name: string) {
  return onSqlite(name, (connection) => ({
    factors: connection.prepare('SELECT * FROM mfa_factors ORDER BY id').all(),
    codes: connection.prepare('SELECT * FROM mfa_recovery_codes ORDER BY user_id, digest').all(),
    keys: connection.prepare('SELECT * FROM service_keys ORDER BY name').all(),
  }))
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/**
 * The second factors of a store in use (migration 0009): TOTP factors pending and confirmed, with and without a step
 * accepted, passkeys with credential ids up to 1,366 characters, names of any text, several transports or none,
 * counters up to 2^32 - 1; ten recovery codes for some accounts, fewer for others; and the service's keys.
 */
function addFactors(name: string, seeded: SeededStore, now: number) {
  return onSqlite(name, (connection) => {
    const factor = connection.prepare(
      `INSERT INTO mfa_factors (id, user_id, type, name, confirmed, secret, last_step, credential_id, public_key,
        counter, backed_up, transports, created_at, last_used_at, credential_digest)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    seeded.ids.slice(0, 30).forEach((userId, i) => {
      const confirmed = i % 4 !== 0
      factor.run(
        randomBytes(16).toString('hex'),
        userId,
        'totp',
        i % 3 === 0 ? 'Authenticator app' : `Téléphone\t"${i}" 🔑`,
        confirmed ? 1 : 0,
        `v1.${randomBytes(48).toString('base64url')}`,
        confirmed && i % 2 ? 59_000_000 + i : null,
        null,
        null,
        0,
        0,
        '[]',
        now - i,
        confirmed ? now - i + 1 : null,
        null,
      )
      if (i % 3 === 0) return
      const credentialId = randomBytes(i === 1 ? 1025 : 16 + i)
        .toString('base64url')
        .slice(0, 1366)
      factor.run(
        randomBytes(16).toString('hex'),
        userId,
        'passkey',
        `Passkey ${i}`,
        1,
        null,
        null,
        credentialId,
        randomBytes(i === 1 ? 1536 : 77).toString('base64url'),
        i === 2 ? 4_294_967_295 : i,
        i % 2,
        JSON.stringify(i % 5 === 0 ? [] : ['internal', 'hybrid'].slice(0, (i % 2) + 1)),
        now - 1_000 - i,
        i % 2 ? now : null,
        sha256(credentialId),
      )
    })
    const code = connection.prepare('INSERT INTO mfa_recovery_codes (user_id, digest) VALUES (?, ?)')
    seeded.ids.slice(0, 12).forEach((userId, i) => {
      for (let n = 0; n < (i % 2 ? 10 : 3); n++) code.run(userId, randomBytes(32).toString('hex'))
    })
    const key = connection.prepare('INSERT INTO service_keys (name, value) VALUES (?, ?)')
    for (const keyName of ['totp_seal', 'webauthn_challenge', 'k']) {
      key.run(keyName, `v1.${randomBytes(96).toString('base64url')}`)
    }
    const count = (table: string) =>
      connection.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number
    return { factors: count('mfa_factors'), codes: count('mfa_recovery_codes'), keys: count('service_keys') }
  })
}

describe('tessera store copy of the second factors, recovery codes and service keys (migration 0009)', () => {
  let seeded: SeededStore
  let expected: { factors: number; codes: number; keys: number }

  beforeAll(async () => {
    seeded = await seedSqliteStore(join(dir.path, 'source.db'), ACCOUNTS, 10)
    expected = addFactors('source.db', seeded, Date.now())
  })

  it('copies every factor, recovery code and service key, verified', async () => {
    const report = await copyIntoNew('source.db', 'target.db', 'factors', expected.factors)
    for (const [part, rows] of [
      ['recoveryCodes', expected.codes],
      ['serviceKeys', expected.keys],
    ] as const) {
      expect(report[part]).toMatchObject({ copied: rows, source: { count: rows } })
      expect(report[part].target).toEqual(report[part].source)
    }
    expect(factorRows('target.db')).toEqual(factorRows('source.db'))
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
      `\ncopied ${expected.factors} second factors, ${expected.codes} recovery codes and ${expected.keys} service ` +
        `keys (the target holds ${expected.factors}, ${expected.codes} and ${expected.keys} of them)\nverified: `,
    )
  })

  it('--force leaves the rows there as they are, copies what is missing, and fails verification when a factor or a key differs', async () => {
    const again = await copyAgain('source.db', 'target.db')
    expect(again.report.factors).toMatchObject({ copied: 0, source: { count: expected.factors } })
    expect(again.report.recoveryCodes).toMatchObject({ copied: 0, source: { count: expected.codes } })
    expect(again.report.serviceKeys).toMatchObject({ copied: 0, source: { count: expected.keys } })
    expect(again.report.mismatch).toBeNull()

    const force = () => copyForced(url('source.db'), url('target.db'))
    // a step accepted on the target since: the same code must not be taken twice, so this is no copy
    onSqlite('target.db', (connection) =>
      connection.prepare("UPDATE mfa_factors SET last_step = 1 WHERE type = 'totp' AND confirmed = 1").run(),
    )
    const step = await force()
    expect(step.code).toBe(1)
    expect(step.stderr).toMatch(
      /\ntessera store copy: verification failed: the target's second factors differ from the source's \(sha256 [0-9a-f]{12} against [0-9a-f]{12}\)\n$/,
    )

    // the factors and a code deleted on the target (used there) are copied again; a key of other bytes is left as it
    // is, and found
    const key = onSqlite('target.db', (connection) => {
      connection.exec('DELETE FROM mfa_factors')
      connection.prepare('DELETE FROM mfa_recovery_codes WHERE user_id = ?').run(seeded.ids[1])
      const before = connection.prepare("SELECT value FROM service_keys WHERE name = 'k'").pluck().get()
      connection.prepare("UPDATE service_keys SET value = 'v1.other' WHERE name = 'k'").run()
      return before
    })
    const keys = await force()
    expect(keys.code).toBe(1)
    expect(keys.stderr).toMatch(/verification failed: the target's service keys differ from the source's/)

    // the key as it was: verified, and what was deleted on the target is there again, as on the source
    onSqlite('target.db', (connection) =>
      connection.prepare("UPDATE service_keys SET value = ? WHERE name = 'k'").run(key),
    )
    const restored = await force()
    expect(restored.code, restored.stderr).toBe(0)
    expect(factorRows('target.db')).toEqual(factorRows('source.db'))
  })

  it('reads a store of a version before 0009 as accounts without second factors, and leaves it as it is', async () => {
    await copyEarlier('before-0009.db', 'after-0009.db', undoMigration0009, [
      'factors',
      'recoveryCodes',
      'serviceKeys',
    ])
    onSqlite('after-0009.db', (connection) => {
      expect(connection.prepare('SELECT COUNT(*) FROM mfa_factors').pluck().get()).toBe(0)
      // the target is migrated to the latest version, that of the last file of migrations/sqlite/
      expect(connection.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get()).toBe(
        readdirSync(new URL('../../../migrations/sqlite/', import.meta.url)).length,
      )
    })
    onSqlite('before-0009.db', (connection) => {
      expect(connection.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get()).toBe(8)
      const tables = connection.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all()
      expect(tables).not.toContain('mfa_factors')
    })
  })

  it.skipIf(serversMissing)(
    'SQLite to PostgreSQL to MariaDB and back to SQLite: every factor, code and key as it was',
    async () => {
      await copyThroughServers('source.db', 'back.db', (report) => {
        for (const [part, rows] of [
          ['factors', expected.factors],
          ['recoveryCodes', expected.codes],
          ['serviceKeys', expected.keys],
        ] as const) {
          expect(report[part]).toMatchObject({ copied: rows })
          expect(report[part].target).toEqual(report[part].source)
        }
      })
      expect(factorRows('back.db')).toEqual(factorRows('source.db'))
    },
    90_000,
  )
})
