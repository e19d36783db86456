import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type BetterSqlite3Type from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { loadBetterSqlite3 } from '../../../src/storage/sqlite/better-sqlite3.js'
import { createSqliteExecutor } from '../../../src/storage/sqlite/sqlite-executor.js'

const BetterSqlite3 = loadBetterSqlite3()

/**
 * Pages written to the WAL since it was last emptied: a transaction writes each page it changed once, so writes to
 * the one page of a small table take one frame if they share a commit, and one frame each if they do not.
 */
const walFrames = (database: BetterSqlite3Type.Database) =>
  (database.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>)[0]?.log
const emptyWal = (database: BetterSqlite3Type.Database) => database.pragma('wal_checkpoint(TRUNCATE)')

describe('createSqliteExecutor', () => {
  let dir: string
  let database: BetterSqlite3Type.Database
  let executor: ReturnType<typeof createSqliteExecutor>

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tessera-executor-'))
    database = new BetterSqlite3(join(dir, 'test.db'))
    database.pragma('journal_mode = WAL')
    database.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL) WITHOUT ROWID')
    executor = createSqliteExecutor(database)
  })
  afterEach(async () => {
    database.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('runs reads at once and returns their rows', async () => {
    database.exec("INSERT INTO t VALUES ('a', 1), ('b', 2)")
    const { rows } = await executor.run('SELECT k, v FROM t WHERE v > ? ORDER BY k', [0])
    expect(rows).toEqual([
      { k: 'a', v: 1 },
      { k: 'b', v: 2 },
    ])
  })

  it('commits the writes of one event-loop turn together, and each reports its own changes', async () => {
    database.exec("INSERT INTO t VALUES ('a', 1)")
    emptyWal(database)
    const results = await Promise.all([
      executor.write('UPDATE t SET v = ? WHERE k = ?', [2, 'a']),
      executor.write('UPDATE t SET v = ? WHERE k = ?', [3, 'missing']),
      executor.write('INSERT INTO t VALUES (?, ?)', ['b', 4]),
    ])
    expect(results.map((result) => result.changes)).toEqual([1, 0, 1])
    expect(walFrames(database)).toBe(1)
    // the checkpoint above emptied the log: two writes in two turns are two commits
    await executor.write('INSERT INTO t VALUES (?, ?)', ['c', 5])
    await executor.write('INSERT INTO t VALUES (?, ?)', ['d', 6])
    expect(walFrames(database)).toBe(2)
    expect(database.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 4 })
  })

  it('a failing write is rolled back alone; the others of its group are committed', async () => {
    database.exec("INSERT INTO t VALUES ('a', 1)")
    const outcomes = await Promise.allSettled([
      executor.write('INSERT INTO t VALUES (?, ?)', ['b', 2]),
      executor.write('INSERT INTO t VALUES (?, ?)', ['a', 9]),
      executor.write('UPDATE t SET v = ? WHERE k = ?', [3, 'a']),
    ])
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((outcomes[1] as PromiseRejectedResult).reason.code).toBe('SQLITE_CONSTRAINT_PRIMARYKEY')
    expect(database.prepare('SELECT k, v FROM t ORDER BY k').all()).toEqual([
      { k: 'a', v: 3 },
      { k: 'b', v: 2 },
    ])
  })

  it('answers a write only once it is committed', async () => {
    const write = executor.write('INSERT INTO t VALUES (?, ?)', ['a', 1])
    // not yet: the group commits at the next turn
    expect(database.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 0 })
    await write
    expect(database.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 1 })
  })

  it('rejects a statement that does not compile, without touching the others', async () => {
    await expect(executor.run('SELEC nonsense', [])).rejects.toThrow(/syntax error/)
    await expect(executor.write('INSER nonsense', [])).rejects.toThrow(/syntax error/)
    expect((await executor.write('INSERT INTO t VALUES (?, ?)', ['a', 1])).changes).toBe(1)
  })
})
