import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sqlitePath } from '../../../src/storage/open-stores.js'
import { loadBetterSqlite3 } from '../../../src/storage/sqlite/better-sqlite3.js'
import { type Backend, type BackendInstance, backends } from '../../support/backends.js'
import { call } from '../../support/http.js'
import { runCli } from '../../support/process.js'
import { useTempDir } from '../../support/temp-dir.js'
import { startTestService } from '../../support/test-service.js'
import { loginSeeded, type SeededStore, seedSqliteStore } from './seed-accounts.js'

const ACCOUNTS = 300
const SAMPLED = [0, 150, 299]

const backend = (name: string) => backends.find((candidate) => candidate.name === name)
const sqlite = backend('sqlite') as Backend
const sqliteRedis = backend('sqlite+redis')
const postgres = backend('postgres')

const dir = useTempDir('store-copy-redis')

async function copy(args: string[], env: Record<string, string>) {
  const result = await runCli(['store', 'copy', '--json', ...args], env)
  return { ...result, report: result.code === 0 ? JSON.parse(result.stdout) : null }
}

/** Refreshes each sampled account's token on the service of `instance`; returns the new ones. */
async function refreshAll(
  instance: BackendInstance,
  tokens: Map<number, string>,
): Promise<Map<number, string>> {
  const service = await startTestService(sqlite, { instance })
  const next = new Map<number, string>()
  try {
    for (const index of SAMPLED) {
      const refreshed = await call(service.app, 'POST', '/auth/refresh', {
        body: { refresh_token: tokens.get(index) },
      })
      expect(refreshed.status, refreshed.text).toBe(200)
      next.set(index, refreshed.body.data.refresh_token)
    }
  } finally {
    await service.close()
  }
  return next
}

describe.skipIf(sqliteRedis === undefined || postgres === undefined)('tessera store copy and Redis', () => {
  let seeded: SeededStore
  const heldBefore = new Map<number, string>()
  let inRedis: BackendInstance
  let onPostgres: BackendInstance
  const sourceUrl = () => `sqlite:${join(dir.path, 'source.db')}`

  beforeAll(async () => {
    seeded = await seedSqliteStore(join(dir.path, 'source.db'), ACCOUNTS, 10)
    for (const [index, token] of await loginSeeded(sourceUrl(), dir.path, SAMPLED))
      heldBefore.set(index, token)
    inRedis = await (sqliteRedis as Backend).setup()
    onPostgres = await (postgres as Backend).setup()
  })

  afterAll(async () => {
    await inRedis?.teardown()
    await onPostgres?.teardown()
  })

  it('SQL → Redis: the tokens go to Redis under REDIS_KEY_PREFIX, and refresh there', async () => {
    const prefix = { REDIS_KEY_PREFIX: inRedis.env.REDIS_KEY_PREFIX as string }
    const { code, stderr, report } = await copy(
      [
        '--from',
        sourceUrl(),
        '--to',
        inRedis.env.DATABASE_URL as string,
        '--redis-to',
        inRedis.env.REDIS_URL as string,
      ],
      prefix,
    )
    expect(code, stderr).toBe(0)
    const relogged = SAMPLED.filter((index) => seeded.expired(index)).length
    expect(report.refreshTokens.copied).toBe(ACCOUNTS - seeded.expiredTokens + relogged)
    expect(report.refreshTokens.target).toEqual(report.refreshTokens.source)
    expect(report.refreshTokensTo).toContain(`prefix ${prefix.REDIS_KEY_PREFIX}`)
    // none went to the SQL table, which a service with REDIS_URL does not read
    const BetterSqlite3 = loadBetterSqlite3()
    const target = new BetterSqlite3(sqlitePath(inRedis.env.DATABASE_URL as string), { readonly: true })
    try {
      expect(target.prepare('SELECT COUNT(*) FROM refresh_tokens').pluck().get()).toBe(0)
      expect(target.prepare('SELECT COUNT(*) FROM users').pluck().get()).toBe(ACCOUNTS)
    } finally {
      target.close()
    }

    // a second copy into the same prefix finds tokens there and refuses
    const again = await runCli(
      [
        'store',
        'copy',
        '--from',
        sourceUrl(),
        '--to',
        `sqlite:${join(dir.path, 'empty.db')}`,
        '--redis-to',
        inRedis.env.REDIS_URL as string,
      ],
      prefix,
    )
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(
      /^tessera store copy: the target already holds refresh tokens in redis [^\n]+\n$/,
    )
  }, 90_000)

  it('Redis → SQL: the tokens rotated in Redis are copied into the target table and refresh there', async () => {
    const rotatedInRedis = await refreshAll(inRedis, heldBefore)
    const { code, stderr, report } = await copy(
      [
        '--from',
        inRedis.env.DATABASE_URL as string,
        '--redis-from',
        inRedis.env.REDIS_URL as string,
        '--to',
        onPostgres.env.DATABASE_URL as string,
      ],
      { REDIS_KEY_PREFIX: inRedis.env.REDIS_KEY_PREFIX as string },
    )
    expect(code, stderr).toBe(0)
    expect(report.accounts.copied).toBe(ACCOUNTS)
    expect(report.refreshTokens.target).toEqual(report.refreshTokens.source)
    expect(report.refreshTokens.copied).toBe(report.refreshTokens.source.count)
    await refreshAll(onPostgres, rotatedInRedis)
  }, 90_000)
})
