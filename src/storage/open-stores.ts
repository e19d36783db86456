import { type Config, ConfigError } from '../config.js'
import { migrate } from './sql/migrate.js'
import type { SqlDialect } from './sql/sql-dialect.js'
import { createSqlRefreshTokenStore } from './sql/sql-refresh-token-store.js'
import { createSqlUserStore } from './sql/sql-user-store.js'
import { createSqliteDialect } from './sqlite/sqlite-dialect.js'
import { createStorageCall } from './storage-call.js'
import type { Stores } from './stores.js'

/** Where storage reports connection trouble that no request sees (an idle connection lost, a reconnect). */
export interface StorageLog {
  warn(fields: Record<string, unknown>, message: string): void
  info(fields: Record<string, unknown>, message: string): void
}

const silent: StorageLog = { warn() {}, info() {} }

/**
 * DATABASE_URL and REDIS_URL to concrete stores, migrated and connected: the only module that knows every backend.
 * Users live in the SQL database; refresh tokens there too, or in Redis when REDIS_URL is set. A store that cannot
 * be reached at start is a ConfigError naming its variable.
 */
export async function openStores(storage: Config['storage'], log: StorageLog = silent): Promise<Stores> {
  const dialect = await openDialect(storage, log)
  const call = createStorageCall(dialect.synchronous ? null : storage.operationTimeoutMs)
  try {
    await migrate(dialect)
  } catch (error) {
    await dialect.close().catch(() => {})
    throw new ConfigError('DATABASE_URL', `could not be opened and migrated: ${describeError(error)}`)
  }
  const database = async () => void (await call('database.ping', () => dialect.run('SELECT 1', [])))
  if (storage.redisUrl === null) {
    return {
      users: createSqlUserStore(dialect, call),
      refreshTokens: createSqlRefreshTokenStore(dialect, call),
      probes: { database },
      sharedCounters: null,
      description: dialect.description,
      close: () => dialect.close(),
    }
  }

  const { createRedisClient } = await import('./redis/redis-client.js')
  const { createRedisRefreshTokenStore } = await import('./redis/redis-refresh-token-store.js')
  const redis = createRedisClient(storage.redisUrl, { timeoutMs: storage.operationTimeoutMs, log })
  let firstError: unknown
  const remember = (error: unknown) => {
    firstError ??= error
  }
  redis.on('error', remember)
  try {
    await redis.connect()
  } catch (error) {
    redis.disconnect()
    await dialect.close()
    throw new ConfigError('REDIS_URL', `could not be reached: ${describeError(firstError ?? error)}`)
  } finally {
    redis.off('error', remember)
  }
  const redisCall = createStorageCall(storage.operationTimeoutMs)
  const redisLocation = new URL(storage.redisUrl)
  return {
    users: createSqlUserStore(dialect, call),
    refreshTokens: createRedisRefreshTokenStore(redis, {
      keyPrefix: storage.redisKeyPrefix,
      call: redisCall,
    }),
    probes: { database, redis: async () => void (await redisCall('redis.ping', () => redis.ping())) },
    sharedCounters: { redis, nameSpace: `${storage.redisKeyPrefix}rate-limit:` },
    description: `${dialect.description}, refresh tokens in redis ${redisLocation.host}${redisLocation.pathname}`,
    async close() {
      await redis.quit().catch(() => redis.disconnect())
      await dialect.close()
    },
  }
}

/** Applies pending migrations and closes the connection again (`tessera migrate`). Returns the names applied. */
export async function migrateDatabase(storage: Config['storage']): Promise<string[]> {
  const dialect = await openDialect(storage, silent)
  try {
    return await migrate(dialect)
  } catch (error) {
    throw new ConfigError('DATABASE_URL', `could not be opened and migrated: ${describeError(error)}`)
  } finally {
    await dialect.close()
  }
}

/** The dialect of DATABASE_URL. Only its driver is loaded: each one costs start-up time and memory. */
async function openDialect(storage: Config['storage'], log: StorageLog): Promise<SqlDialect> {
  const url = storage.databaseUrl
  const options = { maxConnections: storage.maxConnections, timeoutMs: storage.operationTimeoutMs }
  try {
    if (url.startsWith('sqlite:')) return createSqliteDialect(sqlitePath(url))
    const protocol = new URL(url).protocol
    if (protocol === 'postgres:' || protocol === 'postgresql:') {
      const { createPostgresDialect } = await import('./postgres/postgres-dialect.js')
      return createPostgresDialect(url, {
        ...options,
        onIdleError: (error) => log.warn({ err: error }, 'database connection lost; the pool will reconnect'),
      })
    }
    const { createMysqlDialect } = await import('./mysql/mysql-dialect.js')
    return createMysqlDialect(url, options)
  } catch (error) {
    throw new ConfigError('DATABASE_URL', `could not be opened: ${describeError(error)}`)
  }
}

/** `sqlite:./data/app.db`, `sqlite:///abs/app.db` and `sqlite::memory:` to a file name. */
export function sqlitePath(databaseUrl: string): string {
  const rest = databaseUrl.slice('sqlite:'.length)
  return rest.startsWith('//') ? rest.slice(2) : rest
}

function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describeError(error.errors[0])
  const message = error instanceof Error ? error.message : String(error)
  return message || String((error as { code?: unknown })?.code ?? 'unknown error')
}
