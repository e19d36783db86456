import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { createConnection } from 'mysql2/promise'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Backend, type BackendInstance, backends } from '../../support/backends.js'
import { call } from '../../support/http.js'
import { BIN, childEnv, runCli } from '../../support/process.js'
import { useTempDir } from '../../support/temp-dir.js'
import { startTestService } from '../../support/test-service.js'
import { loginSeeded, SEED_PASSWORD, type SeededStore, seedEmail, seedSqliteStore } from './seed-accounts.js'

const ACCOUNTS = 100_000
/** Each step copies (and verifies) 100,000 accounts: about 15 s here, more while other suites load the machine. */
const LONG = 150_000
/** The accounts whose logins and refreshes the services on the targets serve. */
const SAMPLED = [0, 4_321, 57_005, ACCOUNTS - 1]

const backend = (name: string) => backends.find((candidate) => candidate.name === name)
const sqlite = backend('sqlite') as Backend
const postgres = backend('postgres')
const mysql = backend('mysql')

/** The copy's report (--json). */
interface Report {
  resumedAfter: string | null
  accounts: {
    copied: number
    alreadyThere: number
    source: { count: number; sha256: string }
    target: { count: number; sha256: string }
    targetTotal: number
  }
  sessions: {
    copied: number
    source: { count: number; sha256: string }
    target: { count: number; sha256: string }
  }
  auditEvents: {
    copied: number
    source: { count: number; sha256: string }
    target: { count: number; sha256: string }
  }
  mismatch: string | null
}

async function copy(args: string[], env: Record<string, string> = {}) {
  const result = await runCli(['store', 'copy', '--json', ...args], env)
  return { ...result, report: result.code === 0 ? (JSON.parse(result.stdout) as Report) : null }
}

let seeded: SeededStore
const dir = useTempDir('store-copy')
const sourceUrl = () => `sqlite:${join(dir.path, 'source.db')}`

describe.skipIf(postgres === undefined || mysql === undefined)(
  'tessera store copy with 100,000 accounts',
  () => {
    /** The refresh token each sampled account held before any copy (minted by the service on the source). */
    const heldBefore = new Map<number, string>()
    let onPostgres: BackendInstance
    let onMysql: BackendInstance
    /** The refresh tokens the last logins on PostgreSQL stored, for the copy back. */
    let storedOnPostgres = new Map<number, string>()

    beforeAll(async () => {
      seeded = await seedSqliteStore(join(dir.path, 'source.db'), ACCOUNTS)
      for (const [index, token] of await loginSeeded(sourceUrl(), dir.path, SAMPLED))
        heldBefore.set(index, token)
      onPostgres = await (postgres as Backend).setup()
      onMysql = await (mysql as Backend).setup()
    }, LONG)

    afterAll(async () => {
      await onPostgres?.teardown()
      await onMysql?.teardown()
    })

    it(
      'copies them into PostgreSQL, verified, and the service there serves their logins and refreshes',
      async () => {
        const { code, stderr, report } = await copy([
          '--from',
          sourceUrl(),
          '--to',
          onPostgres.env.DATABASE_URL as string,
        ])
        expect(code, stderr).toBe(0)
        expect(report?.mismatch).toBeNull()
        expect(report?.accounts.copied).toBe(ACCOUNTS)
        expect(report?.accounts.target).toEqual(report?.accounts.source)
        // the sampled accounts logged in on the source, so each holds an unexpired session whatever it was seeded
        // with (a login in the default mode replaces the session)
        const relogged = SAMPLED.filter((index) => seeded.expired(index)).length
        expect(report?.sessions.copied).toBe(ACCOUNTS - seeded.expiredSessions + relogged)
        expect(report?.sessions.target).toEqual(report?.sessions.source)
        // the audit trail goes along: at least the sampled logins on the source
        expect(report?.auditEvents.source.count).toBeGreaterThanOrEqual(SAMPLED.length)
        expect(report?.auditEvents.target).toEqual(report?.auditEvents.source)
        // not only the copy's own word: the server counts them
        const client = new pg.Client({ connectionString: onPostgres.env.DATABASE_URL })
        await client.connect()
        try {
          const { rows } = await client.query('SELECT COUNT(*) AS n FROM users')
          expect(Number(rows[0].n)).toBe(ACCOUNTS)
          const sessions = await client.query('SELECT COUNT(*) AS n FROM sessions')
          expect(Number(sessions.rows[0].n)).toBe(report?.sessions.copied)
        } finally {
          await client.end()
        }
        storedOnPostgres = await expectRefreshesAndLogins(onPostgres, heldBefore)
      },
      LONG,
    )

    it(
      'a copy into MariaDB killed midway is refused without --resume, and --resume completes it',
      async () => {
        const target = onMysql.env.DATABASE_URL as string
        await killAfterFirstProgressLine(['--from', sourceUrl(), '--to', target, '--batch-size', '500'])
        const partial = await mysqlCount(target)
        expect(partial).toBeGreaterThan(0)
        expect(partial).toBeLessThan(ACCOUNTS)
        expect(partial % 500).toBe(0) // whole batches only: each is one transaction

        const refused = await copy(['--from', sourceUrl(), '--to', target])
        expect(refused.code).toBe(1)
        expect(refused.stdout).toBe('')
        expect(refused.stderr).toBe(
          'tessera store copy: the target already holds accounts; --resume continues an interrupted copy, --force copies into it anyway\n',
        )
        expect(await mysqlCount(target)).toBe(partial)

        const resumed = await copy(['--from', sourceUrl(), '--to', target, '--resume'])
        expect(resumed.code, resumed.stderr).toBe(0)
        expect(resumed.report?.resumedAfter).toBe([...seeded.ids].sort()[partial - 1])
        expect(resumed.report?.accounts.copied).toBe(ACCOUNTS - partial)
        expect(resumed.report?.accounts.target).toEqual(resumed.report?.accounts.source)
        expect(resumed.report?.accounts.targetTotal).toBe(ACCOUNTS)
        expect(resumed.report?.sessions.target).toEqual(resumed.report?.sessions.source)
        // the audit trail is copied after the accounts, in one transaction: all of it by the resumed run
        expect(resumed.report?.auditEvents.copied).toBeGreaterThanOrEqual(SAMPLED.length)
        expect(resumed.report?.auditEvents.target).toEqual(resumed.report?.auditEvents.source)
        expect(await mysqlCount(target)).toBe(ACCOUNTS)
        await expectRefreshesAndLogins(onMysql, heldBefore)
      },
      LONG,
    )

    it(
      'copies PostgreSQL back into a new SQLite store, with the tokens the logins there stored',
      async () => {
        const back: BackendInstance = {
          env: { DATABASE_URL: `sqlite:${join(dir.path, 'back.db')}`, DATA_DIR: dir.path },
          teardown: async () => {},
        }
        const { code, stderr, report } = await copy([
          '--from',
          onPostgres.env.DATABASE_URL as string,
          '--to',
          back.env.DATABASE_URL as string,
        ])
        expect(code, stderr).toBe(0)
        expect(report?.accounts.copied).toBe(ACCOUNTS)
        // the same rows as the first copy read from SQLite, by the checksum
        expect(report?.accounts.source.count).toBe(ACCOUNTS)
        expect(report?.accounts.target).toEqual(report?.accounts.source)
        // PostgreSQL's trail: the copied events and those of the logins and refreshes there since
        expect(report?.auditEvents.copied).toBeGreaterThan(SAMPLED.length)
        expect(report?.auditEvents.target).toEqual(report?.auditEvents.source)
        await expectRefreshesAndLogins(back, storedOnPostgres)
      },
      LONG,
    )
  },
)

/** Each sampled account refreshes with the token it held before the copy (once: it is then used up), then logs in. */
async function expectRefreshesAndLogins(
  instance: BackendInstance,
  tokens: Map<number, string>,
): Promise<Map<number, string>> {
  const service = await startTestService(sqlite, { instance })
  try {
    for (const index of SAMPLED) {
      const token = tokens.get(index) as string
      const refreshed = await call(service.app, 'POST', '/auth/refresh', { body: { refresh_token: token } })
      expect(refreshed.status, refreshed.text).toBe(200)
      const again = await call(service.app, 'POST', '/auth/refresh', { body: { refresh_token: token } })
      expect(again.status, again.text).toBe(401)
    }
  } finally {
    await service.close()
  }
  return expectLogins(instance)
}

/** Logs each sampled account in (and a wrong password out); returns the refresh tokens the logins stored. */
async function expectLogins(instance: BackendInstance): Promise<Map<number, string>> {
  const service = await startTestService(sqlite, { instance })
  const stored = new Map<number, string>()
  try {
    for (const index of SAMPLED) {
      const login = await call(service.app, 'POST', '/auth/login', {
        body: { email: seedEmail(index), password: SEED_PASSWORD },
      })
      expect(login.status, login.text).toBe(200)
      expect(login.body.data.id).toBe(seeded.ids[index])
      stored.set(index, login.body.data.refresh_token)
      const wrong = await call(service.app, 'POST', '/auth/login', {
        body: { email: seedEmail(index), password: `${SEED_PASSWORD}x` },
      })
      expect(wrong.status).toBe(401)
    }
  } finally {
    await service.close()
  }
  return stored
}

/** Runs the copy and kills it (SIGKILL: no chance to tidy up) when it reports its first batches done. */
async function killAfterFirstProgressLine(args: string[]): Promise<void> {
  const child: ChildProcess = spawn(process.execPath, [BIN, 'store', 'copy', ...args], {
    env: childEnv({}),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  const exited = once(child, 'exit')
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (chunk) => {
      stderr += chunk
      if (/^copying: \d+ of \d+ accounts/m.test(stderr)) {
        child.kill('SIGKILL')
        resolve()
      }
    })
    void exited.then(() => reject(new Error(`the copy ended before it was killed: ${stderr}`)))
  })
  const [, signal] = await exited
  expect(signal).toBe('SIGKILL')
}

async function mysqlCount(url: string): Promise<number> {
  const connection = await createConnection({ uri: url })
  try {
    const [rows] = await connection.query('SELECT COUNT(*) AS n FROM users')
    return Number((rows as Array<{ n: number }>)[0]?.n)
  } finally {
    await connection.end()
  }
}
