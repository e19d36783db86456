import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { createConnection } from 'mysql2/promise'
import pg from 'pg'

/** A fresh, empty place to keep the service's data, and how to remove it again. */
export interface BackendInstance {
  /** Variables that point the service at it (DATABASE_URL, REDIS_URL, REDIS_KEY_PREFIX, DATA_DIR). */
  env: Record<string, string>
  teardown(): Promise<void>
}

/** A storage configuration the auth suites run against. */
export interface Backend {
  name: string
  /** Whether it sets REDIS_URL: refresh tokens and rate-limit counters then live in Redis. */
  redis: boolean
  setup(): Promise<BackendInstance>
}

const POSTGRES_URL = process.env.TEST_POSTGRES_URL
const MYSQL_URL = process.env.TEST_MYSQL_URL
const REDIS_URL = process.env.TEST_REDIS_URL

const uniqueName = () => `tessera_test_${process.pid}_${randomBytes(4).toString('hex')}`

/** A temporary directory: the SQLite file, or only DATA_DIR for a server-backed store. */
async function temporaryDirectory() {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-test-'))
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) }
}

/** A database of its own on the PostgreSQL server of TEST_POSTGRES_URL, dropped afterwards. */
async function postgresDatabase(serverUrl: string) {
  const name = uniqueName()
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl })
      await client.connect()
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await client.end()
      }
    },
  }
}

/** A database of its own on the MySQL/MariaDB server of TEST_MYSQL_URL, dropped afterwards. */
async function mysqlDatabase(serverUrl: string) {
  const name = uniqueName()
  const run = async (statement: string) => {
    const connection = await createConnection({ uri: serverUrl })
    try {
      await connection.query(statement)
    } finally {
      await connection.end()
    }
  }
  await run(`CREATE DATABASE ${name} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`)
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS ${name}`) }
}

/** A key prefix of its own on the Redis server of TEST_REDIS_URL; its keys are deleted afterwards. */
function redisNamespace(serverUrl: string) {
  const prefix = `${uniqueName()}:`
  return {
    prefix,
    async drop() {
      const redis = new Redis(serverUrl, { lazyConnect: true, maxRetriesPerRequest: 1 })
      await redis.connect()
      try {
        for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 500 })) {
          if ((keys as string[]).length > 0) await redis.del(...(keys as string[]))
        }
      } finally {
        redis.disconnect()
      }
    },
  }
}

const sqlite: Backend = {
  name: 'sqlite',
  redis: false,
  async setup() {
    const { dir, remove } = await temporaryDirectory()
    return { env: { DATABASE_URL: `sqlite:${dir}/app.db`, DATA_DIR: dir }, teardown: remove }
  },
}

function serverBacked(name: string, databaseUrl: string | undefined, redisUrl: string | undefined): Backend {
  return {
    name,
    redis: redisUrl !== undefined,
    async setup() {
      const { dir, remove } = await temporaryDirectory()
      const database = databaseUrl?.startsWith('postgres')
        ? await postgresDatabase(databaseUrl)
        : databaseUrl
          ? await mysqlDatabase(databaseUrl)
          : null
      const redis = redisUrl ? redisNamespace(redisUrl) : null
      const env: Record<string, string> = {
        DATA_DIR: dir,
        DATABASE_URL: database?.url ?? `sqlite:${dir}/app.db`,
      }
      if (redis && redisUrl) Object.assign(env, { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: redis.prefix })
      return {
        env,
        async teardown() {
          await database?.drop()
          await redis?.drop()
          await remove()
        },
      }
    },
  }
}

interface Candidate {
  backend: Backend
  /** Why it cannot run here, or null. */
  missing: string | null
}

const unset = (variable: string) => `${variable} is not set`

const candidates: Candidate[] = [
  { backend: sqlite, missing: null },
  {
    backend: serverBacked('postgres', POSTGRES_URL, undefined),
    missing: POSTGRES_URL ? null : unset('TEST_POSTGRES_URL'),
  },
  {
    backend: serverBacked('mysql', MYSQL_URL, undefined),
    missing: MYSQL_URL ? null : unset('TEST_MYSQL_URL'),
  },
  {
    backend: serverBacked('sqlite+redis', undefined, REDIS_URL),
    missing: REDIS_URL ? null : unset('TEST_REDIS_URL'),
  },
  {
    backend: serverBacked('postgres+redis', POSTGRES_URL, REDIS_URL),
    missing: POSTGRES_URL && REDIS_URL ? null : unset(POSTGRES_URL ? 'TEST_REDIS_URL' : 'TEST_POSTGRES_URL'),
  },
]

/** Every backend this machine can run; the auth and storage suites are parametrized over this list. */
export const backends: Backend[] = candidates.filter((c) => c.missing === null).map((c) => c.backend)

/** The backends skipped here, with the reason (printed once per run by the global setup). */
export const skippedBackends = candidates
  .filter((c) => c.missing !== null)
  .map((c) => ({ name: c.backend.name, reason: c.missing as string }))

/** The PostgreSQL and Redis servers for the multi-instance and outage suites, when configured. */
export const servers = { postgres: POSTGRES_URL, mysql: MYSQL_URL, redis: REDIS_URL }
