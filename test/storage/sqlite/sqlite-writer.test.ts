import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import type BetterSqlite3Type from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { loadBetterSqlite3 } from '../../../src/storage/sqlite/better-sqlite3.js'
import { createSqliteExecutor } from '../../../src/storage/sqlite/sqlite-executor.js'
import { createSqliteWriter, type SqliteWriter } from '../../../src/storage/sqlite/sqlite-writer.js'
import { useTempDir } from '../../support/temp-dir.js'

const BetterSqlite3 = loadBetterSqlite3()
const PRAGMAS = ['journal_mode = WAL', 'synchronous = FULL', 'busy_timeout = 5000']
const dir = useTempDir('sqlite-writer')

/**
 * Pages written to the WAL since it was last emptied: a transaction writes each page it changed once, so writes to
 * the one page of a small table take one frame if they share a commit, and one frame each if they do not.
 */
const walFrames = (database: BetterSqlite3Type.Database) =>
  (database.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>)[0]?.log
const emptyWal = (database: BetterSqlite3Type.Database) => database.pragma('wal_checkpoint(TRUNCATE)')
const nextTurn = () => new Promise((resolve) => setImmediate(resolve))
const count = (database: BetterSqlite3Type.Database) => database.prepare('SELECT count(*) AS n FROM t').get()

let file: string
let database: BetterSqlite3Type.Database
let writer: SqliteWriter
let files = 0

beforeEach(() => {
  file = join(dir.path, `test-${files++}.db`)
  database = new BetterSqlite3(file)
  for (const pragma of PRAGMAS) database.pragma(pragma)
  database.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL) WITHOUT ROWID')
  writer = createSqliteWriter(file, PRAGMAS)
})
afterEach(async () => {
  await writer.close()
  database.close()
})

describe('createSqliteExecutor', () => {
  it('runs statements at once on its connection and returns their rows', async () => {
    database.exec("INSERT INTO t VALUES ('a', 1), ('b', 2)")
    const executor = createSqliteExecutor(database)
    const { rows } = await executor.run('SELECT k, v FROM t WHERE v > ? ORDER BY k', [0])
    expect(rows).toEqual([
      { k: 'a', v: 1 },
      { k: 'b', v: 2 },
    ])
    await expect(executor.run('SELEC nonsense', [])).rejects.toThrow(/syntax error/)
  })

  it('runAll runs statements in one transaction: all of them or none', async () => {
    const executor = createSqliteExecutor(database)
    const results = await executor.runAll([
      { sql: 'INSERT INTO t VALUES (?, ?)', parameters: ['a', 1] },
      { sql: 'UPDATE t SET v = ? WHERE k = ?', parameters: [2, 'a'] },
    ])
    expect(results.map((result) => result.changes)).toEqual([1, 1])
    await expect(
      executor.runAll([
        { sql: 'INSERT INTO t VALUES (?, ?)', parameters: ['b', 1] },
        { sql: 'INSERT INTO t VALUES (?, ?)', parameters: ['a', 3] },
      ]),
    ).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_PRIMARYKEY' })
    expect(database.prepare('SELECT k, v FROM t ORDER BY k').all()).toEqual([{ k: 'a', v: 2 }])
    expect(database.inTransaction).toBe(false)
  })

  it('prepares each statement once; later runs only bind values', async () => {
    const prepared: string[] = []
    const executor = createSqliteExecutor({
      prepare(sql) {
        prepared.push(sql)
        return database.prepare(sql)
      },
    })
    for (const [k, v] of [
      ['a', 1],
      ['b', 2],
    ] as const) {
      await executor.run('INSERT INTO t VALUES (?, ?)', [k, v])
    }
    for (const k of ['a', 'b', 'a']) await executor.run('SELECT v FROM t WHERE k = ?', [k])
    expect(prepared).toEqual(['INSERT INTO t VALUES (?, ?)', 'SELECT v FROM t WHERE k = ?'])
  })
})

describe('createSqliteWriter', () => {
  it('commits the writes of one event-loop turn together, and each reports its own changes', async () => {
    database.exec("INSERT INTO t VALUES ('a', 1)")
    emptyWal(database)
    const results = await Promise.all([
      writer.write('UPDATE t SET v = ? WHERE k = ?', [2, 'a']),
      writer.write('UPDATE t SET v = ? WHERE k = ?', [3, 'missing']),
      writer.write('INSERT INTO t VALUES (?, ?)', ['b', 4]),
    ])
    expect(results.map((result) => result.changes)).toEqual([1, 0, 1])
    expect(walFrames(database)).toBe(1)
    // the checkpoint above emptied the log: two writes, each awaited before the next, are two commits
    await writer.write('INSERT INTO t VALUES (?, ?)', ['c', 5])
    await writer.write('INSERT INTO t VALUES (?, ?)', ['d', 6])
    expect(walFrames(database)).toBe(2)
    expect(count(database)).toEqual({ n: 4 })
  })

  it('writes that arrive while a group is being committed form the next group', async () => {
    emptyWal(database)
    const first = writer.write('INSERT INTO t VALUES (?, ?)', ['a', 1])
    await nextTurn() // the first group is in the thread now
    const later = ['b', 'c', 'd'].map((k) => writer.write('INSERT INTO t VALUES (?, ?)', [k, 1]))
    await Promise.all([first, ...later])
    expect(walFrames(database)).toBe(2)
    expect(count(database)).toEqual({ n: 4 })
  })

  it('a failing write is rolled back alone, with SQLite’s error code; the others of its group are committed', async () => {
    database.exec("INSERT INTO t VALUES ('a', 1)")
    const outcomes = await Promise.allSettled([
      writer.write('INSERT INTO t VALUES (?, ?)', ['b', 2]),
      writer.write('INSERT INTO t VALUES (?, ?)', ['a', 9]),
      writer.write('UPDATE t SET v = ? WHERE k = ?', [3, 'a']),
    ])
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(Error)
    expect((outcomes[1] as PromiseRejectedResult).reason.code).toBe('SQLITE_CONSTRAINT_PRIMARYKEY')
    expect(database.prepare('SELECT k, v FROM t ORDER BY k').all()).toEqual([
      { k: 'a', v: 3 },
      { k: 'b', v: 2 },
    ])
  })

  it('whatever a full database does to a group, a write is reported committed exactly when it was', async () => {
    const small = createSqliteWriter(file, [...PRAGMAS, 'max_page_count = 16'])
    try {
      const rows: Array<[string, string]> = [
        ['a', 'x'],
        ['b', 'y'.repeat(200_000)],
        ['c', 'z'],
      ]
      const outcomes = await Promise.allSettled(
        rows.map(([k, v]) => small.write('INSERT INTO t VALUES (?, ?)', [k, v])),
      )
      expect(outcomes[1]).toMatchObject({ status: 'rejected', reason: { code: 'SQLITE_FULL' } })
      const stored = new Set(
        database
          .prepare('SELECT k FROM t')
          .all()
          .map((row) => (row as { k: string }).k),
      )
      rows.forEach(([k], i) => {
        expect(outcomes[i]?.status === 'fulfilled', `write ${k}`).toBe(stored.has(k))
      })
    } finally {
      await small.close()
    }
  })

  it('writeAll runs its statements in one savepoint: all of them or none, the other writes of its group their own', async () => {
    database.exec("INSERT INTO t VALUES ('a', 1)")
    emptyWal(database)
    const outcomes = await Promise.allSettled([
      writer.writeAll([
        { sql: 'UPDATE t SET v = ? WHERE k = ?', parameters: [2, 'a'] },
        { sql: 'INSERT INTO t VALUES (?, ?)', parameters: ['b', 3] },
      ]),
      // its second statement fails: its first is undone with it
      writer.writeAll([
        { sql: 'INSERT INTO t VALUES (?, ?)', parameters: ['c', 4] },
        { sql: 'INSERT INTO t VALUES (?, ?)', parameters: ['a', 5] },
      ]),
      writer.write('INSERT INTO t VALUES (?, ?)', ['d', 6]),
    ])
    expect(outcomes[0]).toMatchObject({ status: 'fulfilled', value: [{ changes: 1 }, { changes: 1 }] })
    expect(outcomes[1]).toMatchObject({
      status: 'rejected',
      reason: { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' },
    })
    expect(outcomes[2]).toMatchObject({ status: 'fulfilled', value: { changes: 1 } })
    // one group, one commit
    expect(walFrames(database)).toBe(1)
    expect(database.prepare('SELECT k, v FROM t ORDER BY k').all()).toEqual([
      { k: 'a', v: 2 },
      { k: 'b', v: 3 },
      { k: 'd', v: 6 },
    ])
  })

  it('answers a write only once it is committed', async () => {
    const write = writer.write('INSERT INTO t VALUES (?, ?)', ['a', 1])
    expect(count(database)).toEqual({ n: 0 })
    await write
    expect(count(database)).toEqual({ n: 1 })
  })

  it('rejects a statement that does not compile, without touching the others', async () => {
    const outcomes = await Promise.allSettled([
      writer.write('INSER nonsense', []),
      writer.write('INSERT INTO t VALUES (?, ?)', ['a', 1]),
    ])
    expect(outcomes[0]).toMatchObject({
      status: 'rejected',
      reason: { message: expect.stringMatching(/syntax error/) },
    })
    expect(outcomes[1]).toMatchObject({ status: 'fulfilled', value: { changes: 1 } })
  })

  it('waits for a lock held by another connection without blocking the event loop', async () => {
    database.exec('BEGIN IMMEDIATE')
    let answered = false
    const write = writer.write('INSERT INTO t VALUES (?, ?)', ['a', 1]).then((result) => {
      answered = true
      return result
    })
    // timers still fire while the writer waits for the lock
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(answered).toBe(false)
    database.exec('COMMIT')
    expect((await write).changes).toBe(1)
    expect(count(database)).toEqual({ n: 1 })
  })

  it('close() commits the writes already handed in, then refuses new ones', async () => {
    const writes = ['a', 'b', 'c'].map((k) => writer.write('INSERT INTO t VALUES (?, ?)', [k, 1]))
    await writer.close()
    expect(await Promise.all(writes)).toHaveLength(3)
    expect(count(database)).toEqual({ n: 3 })
    await expect(writer.write('INSERT INTO t VALUES (?, ?)', ['d', 1])).rejects.toThrow(/closed/)
  })

  it('a thread that cannot open the database fails its writes instead of hanging, and the next write starts a new one', async () => {
    const missing = join(dir.path, `not-yet-${files++}`)
    const elsewhere = createSqliteWriter(join(missing, 'later.db'), PRAGMAS)
    try {
      await expect(elsewhere.write('CREATE TABLE t (k TEXT)', [])).rejects.toThrow(
        /directory does not exist|unable to open/,
      )
      await mkdir(missing)
      expect((await elsewhere.write('CREATE TABLE t (k TEXT)', [])).changes).toBe(0)
      expect((await elsewhere.write('INSERT INTO t VALUES (?)', ['a'])).changes).toBe(1)
    } finally {
      await elsewhere.close()
    }
  })
})
