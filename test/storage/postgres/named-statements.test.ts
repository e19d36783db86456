import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPostgresDatabase } from '../../../src/storage/postgres/postgres-database.js'
import type { SqlDatabase } from '../../../src/storage/sql/sql-database.js'
import { backends, servers } from '../../support/backends.js'

const postgres = backends.find((backend) => backend.name.startsWith('postgres'))

// the statements with parameters are prepared once per pooled connection (src/storage/postgres/postgres-database.ts)
describe.skipIf(postgres === undefined || servers.postgres === undefined)(
  'PostgreSQL named statements',
  () => {
    let teardown: () => Promise<void> = async () => {}
    let database: SqlDatabase
    const prepared = async () =>
      (await database.run('SELECT name, statement FROM pg_prepared_statements ORDER BY name', [])).rows

    beforeAll(async () => {
      const instance = await (postgres as NonNullable<typeof postgres>).setup()
      teardown = instance.teardown
      // one connection: pg_prepared_statements shows the statements of the connection that reads it
      database = openPostgresDatabase(instance.env.DATABASE_URL as string, {
        maxConnections: 1,
        timeoutMs: 5_000,
        onIdleError: () => {},
      })
      await database.run('CREATE TABLE named_things (id INTEGER PRIMARY KEY, label TEXT NOT NULL)', [])
    })
    afterAll(async () => {
      await database?.close()
      await teardown()
    })

    it('a read and a write with parameters are prepared once each, and answer as before', async () => {
      const insert = 'INSERT INTO named_things (id, label) VALUES ($1, $2)'
      const read = 'SELECT label FROM named_things WHERE id = $1'
      expect((await database.write(insert, [1, 'one'])).changes).toBe(1)
      expect((await database.write(insert, [2, 'two'])).changes).toBe(1)
      expect(await database.run(read, [1])).toEqual({ rows: [{ label: 'one' }], changes: 0 })
      expect(await database.run(read, [2])).toEqual({ rows: [{ label: 'two' }], changes: 0 })
      const statements = await prepared()
      expect(statements.map((row) => row.statement).sort()).toEqual([insert, read].sort())
      expect(new Set(statements.map((row) => row.name)).size).toBe(2)
    })

    it('a write through run counts the rows it changed; a statement of many parameters is not prepared', async () => {
      const values = Array.from({ length: 70 }, (_, i) => i + 100)
      const many = `INSERT INTO named_things (id, label) SELECT id, 'many' FROM unnest(ARRAY[${values
        .map((_, i) => `$${i + 1}::int`)
        .join(', ')}]) AS id`
      expect((await database.run(many, values)).changes).toBe(70)
      expect((await prepared()).map((row) => row.statement)).not.toContain(many)
    })
  },
)
