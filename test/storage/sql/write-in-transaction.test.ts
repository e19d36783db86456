import { describe, expect, it } from 'vitest'
import { StorageError } from '../../../src/errors.js'
import {
  type WriteConnection,
  writeAllInTransaction,
  writeInTransaction,
} from '../../../src/storage/sql/sql-database.js'
import { createStorageCall } from '../../../src/storage/storage-call.js'

/**
 * A pooled connection whose server answers each statement when the test says so: it records what was sent and
 * how the connection ended. Real servers are in test/outage.test.ts; this one observes the order of the calls.
 */
function scriptedConnection(answer: (sql: string) => Promise<void> = async () => {}) {
  const sent: string[] = []
  let ended: 'released' | 'destroyed' | null = null
  const connection: WriteConnection = {
    async query(sql) {
      if (ended !== null) throw new Error('query on a connection given back')
      sent.push(sql)
      await answer(sql)
      if (ended === 'destroyed') throw new Error('connection closed')
      return { rows: [], changes: 1 }
    },
    release: () => {
      ended ??= 'released'
    },
    destroy: () => {
      ended ??= 'destroyed'
    },
  }
  return { connection, sent, ended: () => ended }
}

const hang = () => new Promise<void>(() => {})

// docs/api.md R7.2 and R7.3, on PostgreSQL and MySQL/MariaDB
describe('writeInTransaction', () => {
  const call = createStorageCall(50)
  const failure = async (run: () => Promise<unknown>): Promise<StorageError> => {
    const error = await run().then(
      () => null,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(StorageError)
    return error as StorageError
  }

  it('commits the statement in a transaction of its own, and gives the connection back', async () => {
    const server = scriptedConnection()
    const result = await call('users.create', (attempt) =>
      writeInTransaction(async () => server.connection, 'INSERT …', [1], attempt),
    )
    expect(result.changes).toBe(1)
    expect(server.sent).toEqual(['BEGIN', 'INSERT …', 'COMMIT'])
    expect(server.ended()).toBe('released')
  })

  it('a statement that answers after the caller gave up: no COMMIT, the connection closed, a plain failure', async () => {
    let late: () => void = () => {}
    const server = scriptedConnection((sql) =>
      sql === 'UPDATE …' ? new Promise<void>((resolve) => (late = resolve)) : Promise.resolve(),
    )
    const error = await failure(() =>
      call('sessions.rotate', (attempt) =>
        writeInTransaction(async () => server.connection, 'UPDATE …', [], attempt),
      ),
    )
    expect(error.outcomeUnknown).toBe(false)
    // closed at once, so the server rolls back whatever it reads afterwards
    expect(server.ended()).toBe('destroyed')
    late()
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(server.sent).toEqual(['BEGIN', 'UPDATE …'])
  })

  it('a COMMIT that does not answer in time: outcome unknown', async () => {
    const server = scriptedConnection((sql) => (sql === 'COMMIT' ? hang() : Promise.resolve()))
    const error = await failure(() =>
      call('sessions.rotate', (attempt) =>
        writeInTransaction(async () => server.connection, 'UPDATE …', [], attempt),
      ),
    )
    expect(error.outcomeUnknown).toBe(true)
    expect(server.sent).toEqual(['BEGIN', 'UPDATE …', 'COMMIT'])
    expect(server.ended()).toBe('destroyed')
  })

  it('a connection the pool hands over after the caller gave up sends nothing and goes back to the pool', async () => {
    const server = scriptedConnection()
    let handOver: () => void = () => {}
    const pooled = new Promise<void>((resolve) => (handOver = resolve))
    const error = await failure(() =>
      call('users.create', (attempt) =>
        writeInTransaction(
          async () => {
            await pooled
            return server.connection
          },
          'INSERT …',
          [],
          attempt,
        ),
      ),
    )
    expect(error.outcomeUnknown).toBe(false)
    handOver()
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(server.sent).toEqual([])
    expect(server.ended()).toBe('released')
  })

  it('several statements run between one BEGIN and one COMMIT, each reporting its own result', async () => {
    const server = scriptedConnection()
    const results = await call('factors.remove', (attempt) =>
      writeAllInTransaction(
        async () => server.connection,
        [
          { sql: 'SELECT … FOR UPDATE', parameters: [] },
          { sql: 'DELETE …', parameters: [1] },
          { sql: 'DELETE … NOT EXISTS …', parameters: [1] },
        ],
        attempt,
      ),
    )
    expect(results).toHaveLength(3)
    expect(server.sent).toEqual([
      'BEGIN',
      'SELECT … FOR UPDATE',
      'DELETE …',
      'DELETE … NOT EXISTS …',
      'COMMIT',
    ])
    expect(server.ended()).toBe('released')
  })

  it('a statement of several that fails rolls them all back; the ones after it are not sent', async () => {
    const server = scriptedConnection(async (sql) => {
      if (sql === 'INSERT …') throw Object.assign(new Error('foreign key'), { code: '23503' })
    })
    const error = await failure(() =>
      call('factors.replaceRecoveryCodes', (attempt) =>
        writeAllInTransaction(
          async () => server.connection,
          [
            { sql: 'DELETE …', parameters: [] },
            { sql: 'INSERT …', parameters: [] },
            { sql: 'UPDATE …', parameters: [] },
          ],
          attempt,
        ),
      ),
    )
    expect(error.outcomeUnknown).toBe(false)
    expect(server.sent).toEqual(['BEGIN', 'DELETE …', 'INSERT …', 'ROLLBACK'])
    expect(server.ended()).toBe('released')
  })

  it('a statement that fails (a unique violation) is rolled back and the connection kept', async () => {
    const server = scriptedConnection(async (sql) => {
      if (sql === 'INSERT …') throw Object.assign(new Error('duplicate key'), { code: '23505' })
    })
    const error = await failure(() =>
      call('users.create', (attempt) =>
        writeInTransaction(async () => server.connection, 'INSERT …', [], attempt),
      ),
    )
    expect(error.outcomeUnknown).toBe(false)
    expect((error.cause as { code?: string }).code).toBe('23505')
    expect(server.sent).toEqual(['BEGIN', 'INSERT …', 'ROLLBACK'])
    expect(server.ended()).toBe('released')
  })
})
