import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { systemClock } from '../../../src/clock.js'
import { loadConfig } from '../../../src/config.js'
import { migrateDatabase } from '../../../src/storage/open-stores.js'
import { readMigrations, splitStatements } from '../../../src/storage/sql/migrate.js'
import { type BackendInstance, backends } from '../../support/backends.js'

describe('splitStatements', () => {
  it('splits on semicolons at line ends and drops comment-only chunks', () => {
    const text =
      '-- a comment\nCREATE TABLE a (x INT);\n\n-- another\nCREATE INDEX i ON a (x);\n-- trailing\n'
    expect(splitStatements(text)).toEqual([
      '-- a comment\nCREATE TABLE a (x INT)',
      '-- another\nCREATE INDEX i ON a (x)',
    ])
  })

  it('keeps a semicolon inside a line', () => {
    expect(splitStatements("INSERT INTO t VALUES ('a;b');")).toEqual(["INSERT INTO t VALUES ('a;b')"])
  })
})

describe('readMigrations', () => {
  it('reads numbered files in order for every dialect', async () => {
    const sqlite = await readMigrations('sqlite')
    expect(sqlite.map((migration) => migration.version)).toEqual([...sqlite.keys()].map((i) => i + 1))
    expect(sqlite[0]?.statements.length).toBeGreaterThan(0)
  })
})

describe.each(backends)('migrate [$name]', (backend) => {
  let instance: BackendInstance
  beforeEach(async () => {
    instance = await backend.setup()
  })
  afterEach(() => instance.teardown())

  it('applies every migration once; a second run applies nothing', async () => {
    const storage = loadConfig(instance.env).storage
    const first = await migrateDatabase(storage, systemClock)
    expect(first.length).toBeGreaterThan(0)
    expect(await migrateDatabase(storage, systemClock)).toEqual([])
  })

  it('instances starting at once wait for the lock: each migration is applied exactly once', async () => {
    const storage = loadConfig(instance.env).storage
    const runs = await Promise.all(Array.from({ length: 4 }, () => migrateDatabase(storage, systemClock)))
    const applied = runs.flat()
    expect(new Set(applied).size).toBe(applied.length)
    expect(runs.filter((run) => run.length > 0)).toHaveLength(1)
  })
})
