import { sql } from 'kysely'
import { type Config, ConfigError } from '../config.js'
import { migrate } from './sql/migrate.js'
import type { SqlDialect } from './sql/sql-dialect.js'
import { createSqlRefreshTokenStore } from './sql/sql-refresh-token-store.js'
import { createSqlUserStore } from './sql/sql-user-store.js'
import { createSqliteDialect } from './sqlite/sqlite-dialect.js'
import type { Stores } from './stores.js'

/**
 * DATABASE_URL (and later REDIS_URL) to concrete stores, migrated and ready: the only module that knows every
 * backend. A database that cannot be opened or migrated is a ConfigError naming DATABASE_URL.
 */
export async function openStores(storage: Config['storage']): Promise<Stores> {
  const dialect = openDialect(storage.databaseUrl)
  try {
    await migrate(dialect)
  } catch (error) {
    await dialect.db.destroy().catch(() => {})
    throw new ConfigError('DATABASE_URL', `could not be migrated: ${describeError(error)}`)
  }
  return {
    users: createSqlUserStore(dialect),
    refreshTokens: createSqlRefreshTokenStore(dialect),
    probes: { database: async () => void (await sql`SELECT 1`.execute(dialect.db)) },
    description: dialect.description,
    close: () => dialect.db.destroy(),
  }
}

/** Applies pending migrations and closes the connection again (`tessera migrate`). Returns the names applied. */
export async function migrateDatabase(storage: Config['storage']): Promise<string[]> {
  const dialect = openDialect(storage.databaseUrl)
  try {
    return await migrate(dialect)
  } finally {
    await dialect.db.destroy()
  }
}

function openDialect(databaseUrl: string): SqlDialect {
  if (databaseUrl.startsWith('sqlite:')) {
    try {
      return createSqliteDialect(sqlitePath(databaseUrl))
    } catch (error) {
      throw new ConfigError('DATABASE_URL', `could not be opened: ${describeError(error)}`)
    }
  }
  throw new ConfigError(
    'DATABASE_URL',
    `names a backend this build does not support: ${new URL(databaseUrl).protocol}`,
  )
}

/** `sqlite:./data/app.db`, `sqlite:///abs/app.db` and `sqlite::memory:` to a file name. */
export function sqlitePath(databaseUrl: string): string {
  const rest = databaseUrl.slice('sqlite:'.length)
  return rest.startsWith('//') ? rest.slice(2) : rest
}

function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describeError(error.errors[0])
  return error instanceof Error ? error.message : String(error)
}
