// A store prepared for a service: migrated by the service's own `tessera migrate`, then seeded directly through the
// project's storage modules (dist/), while no service runs on it.
import { sql } from 'kysely'
import { seedUsers } from './seed.mjs'
import { migrateWithService } from './service-process.mjs'

/** Long enough for the seeding's large transactions, which the database's statement timeout also bounds. */
const POSTGRES_TIMEOUT_MS = 120_000
/**
 * The built storage modules. Imported by a computed URL, which the type check does not follow: they are typed by
 * their sources below, so `tsc` needs no dist/ (the benchmark builds it before it runs).
 */
const DIST = new URL('../dist/', import.meta.url)

/**
 * @typedef {object} SeedOptions
 * @property {number} count accounts to seed
 * @property {string} passwordHash
 * @property {Record<string, string>} serviceEnv the variables the service will run with (for `tessera migrate`)
 * @property {(line: string) => void} log
 */

/**
 * Seeds the SQLite store of DATA_DIR (DATABASE_URL unset: the embedded default, `sqlite:<DATA_DIR>/app.db`).
 * @param {string} dataDir
 * @param {SeedOptions} options
 */
export async function seedSqliteStore(dataDir, options) {
  await migrateWithService(options.serviceEnv)
  const { openSqliteDatabase } = /** @type {typeof import('../src/storage/sqlite/sqlite-database.js')} */ (
    await import(new URL('storage/sqlite/sqlite-database.js', DIST).href)
  )
  const database = openSqliteDatabase(`${dataDir}/app.db`)
  try {
    await seed(database, options, true)
  } finally {
    await database.close()
  }
}

/**
 * Seeds the PostgreSQL database of `databaseUrl`. Sessions live in Redis in that configuration, so only accounts are
 * seeded.
 * @param {string} databaseUrl
 * @param {SeedOptions} options
 */
export async function seedPostgresStore(databaseUrl, options) {
  await migrateWithService(options.serviceEnv)
  const { openPostgresDatabase } =
    /** @type {typeof import('../src/storage/postgres/postgres-database.js')} */ (
      await import(new URL('storage/postgres/postgres-database.js', DIST).href)
    )
  const database = openPostgresDatabase(databaseUrl, {
    maxConnections: 2,
    timeoutMs: POSTGRES_TIMEOUT_MS,
    onIdleError: () => {},
  })
  try {
    await seed(database, options, false)
    // a table that has held its accounts for long is vacuumed and analysed; right after a bulk load, PostgreSQL's
    // autovacuum would instead do that work during the measurement, on the same two cores
    await sql`VACUUM ANALYZE users`.execute(database.db)
  } finally {
    await database.close()
  }
}

/**
 * @param {import('../src/storage/sql/sql-database.js').SqlDatabase} database
 * @param {SeedOptions} options
 * @param {boolean} sessions whether each account gets a session
 */
async function seed(database, options, sessions) {
  const started = performance.now()
  const step = Math.max(1, Math.floor(options.count / 4))
  let reported = 0
  await seedUsers(database, {
    count: options.count,
    passwordHash: options.passwordHash,
    sessions,
    onProgress: (done) => {
      if (done - reported < step && done < options.count) return
      reported = done
      const seconds = ((performance.now() - started) / 1000).toFixed(1)
      options.log(
        `  seeded ${done.toLocaleString('en-US')} of ${options.count.toLocaleString('en-US')} (${seconds} s)`,
      )
    },
  })
}
