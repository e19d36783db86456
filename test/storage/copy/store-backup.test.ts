import { randomUUID } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadBetterSqlite3 } from '../../../src/storage/sqlite/better-sqlite3.js'
import { type Backend, backends } from '../../support/backends.js'
import { call } from '../../support/http.js'
import { type RunningService, runCli, startProcess } from '../../support/process.js'
import { useTempDir } from '../../support/temp-dir.js'
import { startTestService } from '../../support/test-service.js'
import { seedSqliteStore } from './seed-accounts.js'

const SEEDED = 30_000
const PASSWORD = 'backup test password'
const sqlite = backends.find((candidate) => candidate.name === 'sqlite') as Backend
const dir = useTempDir('store-backup')
const databaseUrl = () => `sqlite:${join(dir.path, 'app.db')}`

/** Registers accounts from `workers` loops until stopped; `acknowledged` holds the e-mail of every 200, in order. */
function registerContinuously(url: string, workers: number) {
  const acknowledged: string[] = []
  const failures: string[] = []
  let running = true
  const loop = async () => {
    while (running) {
      const email = `live-${randomUUID()}@example.com`
      const response = await fetch(`${url}/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password: PASSWORD }),
      })
      await response.arrayBuffer()
      if (response.status === 200) acknowledged.push(email)
      else failures.push(`${response.status}`)
    }
  }
  const loops = Array.from({ length: workers }, loop)
  return {
    acknowledged,
    failures,
    async stop() {
      running = false
      await Promise.all(loops)
    },
  }
}

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20))
}

describe('tessera store backup', () => {
  let service: RunningService

  beforeAll(async () => {
    await seedSqliteStore(join(dir.path, 'app.db'), SEEDED)
    service = await startProcess({ DATABASE_URL: databaseUrl(), DATA_DIR: dir.path })
  })

  afterAll(async () => {
    await service?.stop()
  })

  it('while registrations are in flight, holds every account acknowledged before it began, and is a valid database', async () => {
    const file = join(dir.path, 'backup.db')
    const load = registerContinuously(service.url, 4)
    let before: string[] = []
    let during = 0
    try {
      await waitFor(() => load.acknowledged.length >= 20)
      before = [...load.acknowledged]
      const backup = await runCli(['store', 'backup', file, '--database-url', databaseUrl()])
      during = load.acknowledged.length - before.length
      expect(backup.code, backup.stderr).toBe(0)
      expect(backup.stdout).toMatch(new RegExp(`^backed up \\d+ accounts to ${file} \\(\\d+ bytes\\)\\n$`))
    } finally {
      await load.stop()
    }
    expect(load.failures).toEqual([])
    // the service kept writing while the backup ran: what the test is about
    expect(during).toBeGreaterThan(0)

    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(existsSync(`${file}-wal`)).toBe(false)
    const BetterSqlite3 = loadBetterSqlite3()
    const copy = new BetterSqlite3(file, { readonly: true })
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok')
      // one self-contained file: a rollback journal, no -wal beside it to lose
      expect(copy.pragma('journal_mode', { simple: true })).toBe('delete')
      const emails = new Set(copy.prepare('SELECT email FROM users').pluck().all() as string[])
      expect(emails.size).toBeGreaterThanOrEqual(SEEDED + before.length)
      expect(before.filter((email) => !emails.has(email))).toEqual([])
    } finally {
      copy.close()
    }

    // restored as docs/operations.md says: the file in place of the database, mode 0600, and the service started on it
    const restored = join(dir.path, 'restored')
    mkdirSync(restored, { mode: 0o700 })
    copyFileSync(file, join(restored, 'app.db'))
    const instance = {
      env: { DATABASE_URL: `sqlite:${join(restored, 'app.db')}`, DATA_DIR: restored },
      teardown: async () => {},
    }
    const onRestored = await startTestService(sqlite, { instance })
    try {
      const login = await call(onRestored.app, 'POST', '/auth/login', {
        body: { email: before[before.length - 1], password: PASSWORD },
      })
      expect(login.status, login.text).toBe(200)
    } finally {
      await onRestored.close()
    }
  }, 90_000)

  it('refuses an existing file unless --force, and a store that is not SQLite, with one line', async () => {
    const file = join(dir.path, 'twice.db')
    const first = await runCli(['store', 'backup', file], { DATABASE_URL: databaseUrl() })
    expect(first.code, first.stderr).toBe(0)
    const size = statSync(file).size

    const refused = await runCli(['store', 'backup', file], { DATABASE_URL: databaseUrl() })
    expect(refused).toEqual({
      code: 1,
      stdout: '',
      stderr: `tessera store backup: ${file} exists; --force replaces it\n`,
    })
    expect(statSync(file).size).toBe(size)

    const forced = await runCli(['store', 'backup', file, '--force', '--json'], {
      DATABASE_URL: databaseUrl(),
    })
    expect(forced.code, forced.stderr).toBe(0)
    expect(JSON.parse(forced.stdout)).toMatchObject({ file, bytes: statSync(file).size })

    const notSqlite =
      'tessera store backup: DATABASE_URL is not a SQLite store; back up PostgreSQL and MySQL with their own tools (pg_dump, mysqldump)\n'
    const elsewhere = join(dir.path, 'elsewhere.db')
    for (const [args, env] of [
      [['--database-url', 'postgres://postgres@127.0.0.1:5432/postgres'], {}],
      [[], { DATABASE_URL: 'mysql://root@127.0.0.1:3306/tessera' }],
    ] as const) {
      const result = await runCli(['store', 'backup', elsewhere, ...args], env)
      expect(result).toEqual({ code: 1, stdout: '', stderr: notSqlite })
    }
    const missing = await runCli(['store', 'backup', elsewhere], {
      DATABASE_URL: `sqlite:${dir.path}/none.db`,
    })
    expect(missing).toEqual({
      code: 1,
      stdout: '',
      stderr: `tessera store backup: no SQLite database at ${dir.path}/none.db\n`,
    })
    expect(existsSync(elsewhere)).toBe(false)
  }, 90_000)
})
