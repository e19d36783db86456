import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sqlitePath } from '../../../src/storage/open-stores.js'
import { loadBetterSqlite3 } from '../../../src/storage/sqlite/better-sqlite3.js'
import { type Backend, type BackendInstance, backends, servers } from '../../support/backends.js'
import { call } from '../../support/http.js'
import { runCli } from '../../support/process.js'
import { useTempDir } from '../../support/temp-dir.js'
import { startTestService } from '../../support/test-service.js'
import { fullSession, loginSeeded, type SeededStore, seedSqliteStore } from './seed-accounts.js'

const ACCOUNTS = 300
const SAMPLED = [0, 150, 299]

const backend = (name: string) => backends.find((candidate) => candidate.name === name)
const sqlite = backend('sqlite') as Backend
const sqliteRedis = backend('sqlite+redis')
const postgres = backend('postgres')

const dir = useTempDir('store-copy-redis')

/** Runs `use` with a connection to the Redis of the tests (TEST_REDIS_URL). */
async function withRedis<T>(use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(servers.redis as string, { lazyConnect: true })
  await redis.connect()
  try {
    return await use(redis)
  } finally {
    redis.disconnect()
  }
}

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

  it('SQL → Redis: the sessions go to Redis under REDIS_KEY_PREFIX, and refresh there', async () => {
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
    expect(report.sessions.copied).toBe(ACCOUNTS - seeded.expiredSessions + relogged)
    expect(report.sessions.target).toEqual(report.sessions.source)
    expect(report.sessionsTo).toContain(`prefix ${prefix.REDIS_KEY_PREFIX}`)
    // none went to the SQL table, which a service with REDIS_URL does not read
    const BetterSqlite3 = loadBetterSqlite3()
    const target = new BetterSqlite3(sqlitePath(inRedis.env.DATABASE_URL as string), { readonly: true })
    try {
      expect(target.prepare('SELECT COUNT(*) FROM sessions').pluck().get()).toBe(0)
      expect(target.prepare('SELECT COUNT(*) FROM users').pluck().get()).toBe(ACCOUNTS)
    } finally {
      target.close()
    }
    // not only the checksums' word: a seeded session, every field of it, in its user's hash as the service keeps it
    // account 4: not logged in again on the source, so its session is the seeded one, every field of it set
    expect(fullSession(4)).toBe(true)
    const seededId = seeded.ids[4] as string
    const stored = await withRedis((redis) =>
      redis.hgetall(`${prefix.REDIS_KEY_PREFIX}sessions:{${seededId}}`),
    )
    const [[id, record]] = Object.entries(stored) as [[string, string]]
    const source = new BetterSqlite3(join(dir.path, 'source.db'), { readonly: true })
    try {
      const row = source.prepare('SELECT * FROM sessions WHERE user_id = ?').get(seededId) as Record<
        string,
        unknown
      >
      expect(id).toBe(row.id)
      expect(JSON.parse(record)).toEqual({
        d: row.token_digest,
        e: row.expires_at,
        c: row.created_at,
        u: row.last_used_at,
        v: row.device,
        a: row.client_address,
        p: row.previous_digest,
        r: row.rotated_at,
        f: true,
      })
      expect(row.second_factor).toBe(1)
    } finally {
      source.close()
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
    expect(again.stderr).toMatch(/^tessera store copy: the target already holds sessions in redis [^\n]+\n$/)
  }, 90_000)

  it('Redis → SQL: the sessions rotated in Redis, and a refresh token kept as an earlier version did, are copied into the target table', async () => {
    const rotatedInRedis = await refreshAll(inRedis, heldBefore)
    // an account whose refresh token an earlier version stored: one key of its own, read as one more session
    const legacyUser = seeded.ids[1] as string
    const legacyDigest = 'e'.repeat(64)
    const legacyExpiry = Date.now() + 3_600_000
    await withRedis((redis) =>
      redis.set(
        `${inRedis.env.REDIS_KEY_PREFIX}refresh:{${legacyUser}}`,
        `${legacyDigest}:${legacyExpiry}`,
        'PXAT',
        legacyExpiry,
      ),
    )
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
    expect(report.sessions.target).toEqual(report.sessions.source)
    expect(report.sessions.copied).toBe(report.sessions.source.count)
    const relogged = SAMPLED.filter((index) => seeded.expired(index)).length
    expect(report.sessions.copied).toBe(ACCOUNTS - seeded.expiredSessions + relogged + 1)
    const client = new pg.Client({ connectionString: onPostgres.env.DATABASE_URL })
    await client.connect()
    try {
      const { rows } = await client.query(
        'SELECT id, slot, expires_at, device, second_factor FROM sessions WHERE user_id = $1 AND token_digest = $2',
        [legacyUser, legacyDigest],
      )
      expect(rows).toEqual([
        {
          id: createHash('sha1').update(legacyDigest).digest('hex').slice(0, 32),
          slot: rows[0]?.id,
          expires_at: String(legacyExpiry),
          device: '',
          second_factor: false,
        },
      ])
      // the flag of a seeded session, established with a second factor (fullSession), from SQL to Redis to here
      const flagged = await client.query('SELECT second_factor FROM sessions WHERE user_id = $1', [
        seeded.ids[4],
      ])
      expect(flagged.rows).toEqual([{ second_factor: true }])
    } finally {
      await client.end()
    }
    await refreshAll(onPostgres, rotatedInRedis)
  }, 90_000)
})
