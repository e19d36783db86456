import { existsSync } from 'node:fs'
import type { Clock } from '../clock.js'
import { type Config, ConfigError } from '../config.js'
import { quoted } from '../printable.js'
import { migrate } from './sql/migrate.js'
import { createSqlAuditStore } from './sql/sql-audit-store.js'
import { createSqlAvatarStore } from './sql/sql-avatar-store.js'
import type { SqlDatabase, SqlEngine } from './sql/sql-database.js'
import { createSqlEmailCodeStore } from './sql/sql-email-code-store.js'
import { createSqlFactorStore } from './sql/sql-factor-store.js'
import { createSqlOutboxStore } from './sql/sql-outbox-store.js'
import { createSqlProviderLinkStore } from './sql/sql-provider-link-store.js'
import { createSqlRateCounterStore } from './sql/sql-rate-counter-store.js'
import { createSqlServiceKeyStore } from './sql/sql-service-key-store.js'
import { createSqlSessionStore } from './sql/sql-session-store.js'
import { createSqlTicketStore } from './sql/sql-ticket-store.js'
import { createSqlUserStore } from './sql/sql-user-store.js'
import { createSqlWebhookUrlStore } from './sql/sql-webhook-url-store.js'
import { isExistingSqliteStore, openSqliteDatabase } from './sqlite/sqlite-database.js'
import { createStorageCall } from './storage-call.js'
import type { StorePlacement, Stores } from './stores.js'

/** Where storage reports connection trouble that no request sees (an idle connection lost, a reconnect). */
export interface StorageLog {
  warn(fields: Record<string, unknown>, message: string): void
  info(fields: Record<string, unknown>, message: string): void
}

const silent: StorageLog = { warn() {}, info() {} }

export interface OpenStoresOptions {
  /**
   * Only a store that exists already: a SQLite file that is there, a database in which migrations were applied
   * before. The commands that only read or change accounts (`tessera users`, `tessera audit`) open their store so,
   * so that a mistyped DATABASE_URL is refused rather than created empty; the service and `tessera migrate` create
   * theirs (false, the default).
   */
  existing?: boolean
}

/**
 * DATABASE_URL and REDIS_URL to concrete stores, migrated and connected: the only module that knows every backend.
 * Users (with their avatars, provider links and second factors), the audit trail, the e-mail codes, the outbox, the
 * one-time tickets and the service keys live in the SQL database; sessions there too, or in Redis when REDIS_URL is set (with the rate-limit
 * counters and the login attempts, which are kept in each process otherwise); the shared counters in Redis when it
 * is set, else in the SQL database. Stores.placement says so. A store that cannot be reached at start, or that does
 * not exist when `existing` asks for one that does, is a ConfigError naming its variable.
 */
export async function openStores(
  storage: Config['storage'],
  clock: Clock,
  log: StorageLog = silent,
  options: OpenStoresOptions = {},
): Promise<Stores> {
  const sqlite = databaseEngine(storage.databaseUrl) === 'sqlite'
  // SQLite is looked at read-only, before the store is opened (which would create the file, or set WAL mode on
  // someone else's); a server's database once it is connected
  if (options.existing && sqlite) refuseMissingSqliteStore(sqlitePath(storage.databaseUrl))
  const database = await openDatabase(storage, log)
  const call = createStorageCall(database.synchronous ? null : storage.operationTimeoutMs)
  try {
    if (options.existing && !sqlite && !(await hasMigrations(database))) throw noTablesOfTheService()
    await migrate(database, clock)
  } catch (error) {
    await database.close().catch(() => {})
    if (error instanceof ConfigError) throw error
    throw new ConfigError('DATABASE_URL', `could not be opened and migrated: ${describeError(error)}`)
  }
  const probeDatabase = async () => void (await call('database.ping', () => database.run('SELECT 1', [])))
  // the audit trail, the codes, the outbox and the disabled webhook URLs stay in SQL whatever REDIS_URL says: records
  // to keep, not a cache (a queued mail or event the answer said was made must survive a restart); so do the
  // avatars, provider links and second factors, parts of the account (its deletion removes them), and the tickets
  // and service keys, which every instance must see (a sign-in's callback may reach another one)
  const inSql = {
    users: createSqlUserStore(database, call),
    audit: createSqlAuditStore(database, call),
    codes: createSqlEmailCodeStore(database, call),
    outbox: createSqlOutboxStore(database, call),
    webhookUrls: createSqlWebhookUrlStore(database, call),
    avatars: createSqlAvatarStore(database, call),
    providerLinks: createSqlProviderLinkStore(database, call),
    tickets: createSqlTicketStore(database, call),
    factors: createSqlFactorStore(database, call),
    serviceKeys: createSqlServiceKeyStore(database, call),
  }
  const placement = placementOf(database.engine, storage.redisUrl !== null)
  if (storage.redisUrl === null) {
    return {
      ...inSql,
      sessions: createSqlSessionStore(database, call),
      probes: { database: probeDatabase },
      rateCounters: null,
      sharedCounters: createSqlRateCounterStore(database, call, clock),
      loginAttempts: null,
      placement,
      description: database.description,
      close: () => database.close(),
    }
  }

  const { connectRedis, createRedisClient } = await import('./redis/redis-client.js')
  const { createRedisSessionStore } = await import('./redis/redis-session-store.js')
  const { createRedisRateCounterStore } = await import('./redis/redis-rate-counter-store.js')
  const { createRedisLoginAttemptStore } = await import('./redis/redis-login-attempt-store.js')
  const redis = createRedisClient(storage.redisUrl, { timeoutMs: storage.operationTimeoutMs, log })
  try {
    await connectRedis(redis)
  } catch (error) {
    await database.close()
    throw new ConfigError('REDIS_URL', `could not be reached: ${describeError(error)}`)
  }
  const redisCall = createStorageCall(storage.operationTimeoutMs)
  const redisLocation = new URL(storage.redisUrl)
  const inRedis = { keyPrefix: storage.redisKeyPrefix, call: redisCall }
  // one store of counters: the rate limits' and the shared ones count under keys of their own
  const counters = createRedisRateCounterStore(redis, inRedis)
  return {
    ...inSql,
    sessions: createRedisSessionStore(redis, inRedis),
    probes: {
      database: probeDatabase,
      redis: async () => void (await redisCall('redis.ping', () => redis.ping())),
    },
    rateCounters: counters,
    sharedCounters: counters,
    loginAttempts: createRedisLoginAttemptStore(redis, inRedis),
    placement,
    description: `${database.description}, sessions in redis ${redisLocation.host}${redisLocation.pathname}`,
    async close() {
      await redis.quit().catch(() => redis.disconnect())
      await database.close()
    },
  }
}

/**
 * Which engine holds each store, as openStores chooses them: the accounts (their avatars, provider links, tickets,
 * second factors and service keys with them), the audit trail, the codes and the outbox in the SQL database always;
 * sessions and the shared counters there too, or with the rate-limit counters and the login attempts in Redis
 * (otherwise kept in each process).
 */
function placementOf(engine: SqlEngine, redis: boolean): StorePlacement {
  const shared = redis ? 'redis' : null
  return {
    users: engine,
    sessions: shared ?? engine,
    audit: engine,
    mail: engine,
    sharedCounters: shared ?? engine,
    rateCounters: shared,
    loginAttempts: shared,
    probes: redis ? { database: engine, redis: 'redis' } : { database: engine },
  }
}

function refuseMissingSqliteStore(file: string): void {
  if (!existsSync(file)) {
    throw new ConfigError(
      'DATABASE_URL',
      `names no existing store: ${quoted(file)} does not exist (tessera serve or tessera migrate creates it)`,
    )
  }
  if (!isExistingSqliteStore(file)) throw noTablesOfTheService()
}

function noTablesOfTheService(): ConfigError {
  return new ConfigError(
    'DATABASE_URL',
    'names no existing store: the database holds no tables of the service (tessera serve or tessera migrate creates them)',
  )
}

/** Whether migrations were ever applied to the database: its schema_migrations table exists. */
async function hasMigrations(database: SqlDatabase): Promise<boolean> {
  const tables = await database.db.introspection.getTables()
  return tables.some((table) => table.name === 'schema_migrations')
}

/**
 * Applies pending migrations and closes the connection again (`tessera migrate`), recording them by `clock`.
 * Returns the names applied.
 */
export async function migrateDatabase(storage: Config['storage'], clock: Clock): Promise<string[]> {
  const database = await openDatabase(storage, silent)
  try {
    return await migrate(database, clock)
  } catch (error) {
    throw new ConfigError('DATABASE_URL', `could not be opened and migrated: ${describeError(error)}`)
  } finally {
    await database.close()
  }
}

/**
 * The database of DATABASE_URL, not migrated. Only its driver is loaded: each one costs start-up time and memory.
 * `tessera store copy` opens its two databases through it.
 */
export async function openDatabase(storage: Config['storage'], log: StorageLog): Promise<SqlDatabase> {
  const url = storage.databaseUrl
  const options = { maxConnections: storage.maxConnections, timeoutMs: storage.operationTimeoutMs }
  try {
    const engine = databaseEngine(url)
    if (engine === 'sqlite') return openSqliteDatabase(sqlitePath(url))
    if (engine === 'postgres') {
      const { openPostgresDatabase } = await import('./postgres/postgres-database.js')
      return openPostgresDatabase(url, {
        ...options,
        onIdleError: (error) => log.warn({ err: error }, 'database connection lost; the pool will reconnect'),
      })
    }
    const { openMysqlDatabase } = await import('./mysql/mysql-database.js')
    return openMysqlDatabase(url, options)
  } catch (error) {
    throw new ConfigError('DATABASE_URL', `could not be opened: ${describeError(error)}`, { cause: error })
  }
}

/** The SQL engine of a DATABASE_URL (whose scheme the configuration has checked): sqlite:, postgres(ql)://, mysql://. */
export function databaseEngine(databaseUrl: string): SqlEngine {
  if (databaseUrl.startsWith('sqlite:')) return 'sqlite'
  return databaseUrl.startsWith('postgres') ? 'postgres' : 'mysql'
}

/** `sqlite:./data/app.db`, `sqlite:///abs/app.db` and `sqlite::memory:` to a file name. */
export function sqlitePath(databaseUrl: string): string {
  const rest = databaseUrl.slice('sqlite:'.length)
  return rest.startsWith('//') ? rest.slice(2) : rest
}

/**
 * The reason an error gives, for a one-line message: the first address's error of a connection refused on every
 * address (an AggregateError), else the message, else its code.
 */
export function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describeError(error.errors[0])
  const message = error instanceof Error ? error.message : String(error)
  return message || String((error as { code?: unknown })?.code ?? 'unknown error')
}
