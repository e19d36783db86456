import { Worker } from 'node:worker_threads'
import type { SqlResult } from '../sql/sql-database.js'
import type { SqlQuery } from '../sql/sql-statements.js'
import { betterSqlite3Path } from './better-sqlite3.js'
import type {
  QueuedWrite,
  ThreadError,
  WriterReply,
  WriterRequest,
  WriterThreadData,
} from './sqlite-writer-protocol.js'

export interface SqliteWriter {
  /** Runs one statement that writes; resolves once the transaction holding it is committed (durable). */
  write(sql: string, parameters: readonly unknown[]): Promise<SqlResult>
  /**
   * Runs statements that write, in order, all or none (one savepoint); resolves with their results once the
   * transaction holding them is committed.
   */
  writeAll(queries: readonly SqlQuery[]): Promise<SqlResult[]>
  /** Commits what was handed in, then closes the thread's connection. Later writes are refused. */
  close(): Promise<void>
}

/** At most this many writes share a commit; the rest wait for the next one. */
const MAX_GROUP = 1_000

interface PendingWrite {
  statements: QueuedWrite
  /** With the results of its statements, in order. */
  resolve(results: SqlResult[]): void
  reject(error: unknown): void
}

function toError({ message, code }: ThreadError): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code })
}

/**
 * The writes of an SQLite file, on a thread of its own with its own connection. With synchronous=FULL every
 * commit waits for an fsync; here that wait blocks neither the event loop nor the reads, which stay on the main
 * connection.
 *
 * Writes are committed in groups: one group at a time is in the thread, and the writes that arrive meanwhile form
 * the next, so the busier the service, the more writes share an fsync. Each group is one IMMEDIATE transaction and
 * each write (one statement, or the few of writeAll) runs in a savepoint of its own, so a failing one (a duplicate
 * e-mail) is rolled back alone, all its statements with it. A caller is answered only after its group's COMMIT: the
 * durability of a commit per write. If the thread dies (it should not), the writes it held fail, and the next write
 * starts a new one.
 */
export function createSqliteWriter(filename: string, pragmas: readonly string[]): SqliteWriter {
  const workerData: WriterThreadData = { driver: betterSqlite3Path(), filename, pragmas: [...pragmas] }
  let worker: Worker | null = null
  let queued: PendingWrite[] = []
  /** The group in a thread, and which thread has it. */
  let inFlight: { thread: Worker; group: PendingWrite[] } | null = null
  let scheduled = false
  let closed: Promise<void> | null = null
  let drained: (() => void) | null = null

  /** The thread is gone: the group it held fails, and the next write starts a new thread. */
  const lost = (thread: Worker, error: Error) => {
    if (worker === thread) worker = null
    if (inFlight?.thread !== thread) return
    const { group } = inFlight
    inFlight = null
    for (const write of group) write.reject(error)
    settle()
  }

  const start = (): Worker => {
    // the module beside this one: src/ under the tests, dist/ in production
    const thread = new Worker(new URL('./sqlite-writer-thread.js', import.meta.url), {
      workerData,
      // the thread holds one group's statements and rows at a time
      resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 },
    })
    thread.unref()
    thread.on('message', (reply: WriterReply) => {
      if ('closed' in reply) return
      if ('fatal' in reply) {
        lost(thread, toError(reply.fatal))
        return
      }
      if (inFlight?.thread !== thread) return
      const { group } = inFlight
      inFlight = null
      thread.unref()
      if ('outcomes' in reply) {
        group.forEach((write, i) => {
          const outcome = reply.outcomes[i]
          if (outcome !== undefined && 'results' in outcome) write.resolve(outcome.results)
          else write.reject(toError(outcome?.error ?? { message: 'no outcome for this write' }))
        })
      } else {
        for (const write of group) write.reject(toError(reply.error))
      }
      settle()
    })
    thread.on('error', (error) => lost(thread, error))
    thread.on('exit', (code) => lost(thread, new Error(`the SQLite writer thread exited with code ${code}`)))
    return thread
  }

  /** After a group: the next one goes at the next turn, so that the writes of this turn join it. */
  const settle = () => {
    if (queued.length > 0) schedule()
    else if (inFlight === null && drained !== null) drained()
  }

  const schedule = () => {
    if (scheduled) return
    scheduled = true
    setImmediate(send)
  }

  const send = () => {
    scheduled = false
    if (inFlight !== null || queued.length === 0) return
    const group = queued.slice(0, MAX_GROUP)
    queued = queued.slice(group.length)
    worker ??= start()
    inFlight = { thread: worker, group }
    // a group in the thread keeps the process alive: an accepted write is not dropped by an exit
    worker.ref()
    const request: WriterRequest = group.map((write) => write.statements)
    worker.postMessage(request)
  }

  /** Queues one write; `resolve` is given its statements' results once its group is committed. */
  const enqueue = (
    statements: QueuedWrite,
    resolve: PendingWrite['resolve'],
    reject: PendingWrite['reject'],
  ): void => {
    if (closed !== null) {
      reject(new Error('the SQLite writer is closed'))
      return
    }
    queued.push({ statements, resolve, reject })
    if (inFlight === null) schedule()
  }

  return {
    // one statement, the hot path of every refresh: one promise, resolved with its one result
    write: (sql, parameters) =>
      new Promise((resolve, reject) =>
        enqueue([[sql, parameters]], (results) => resolve(results[0] as SqlResult), reject),
      ),
    writeAll: (queries) =>
      new Promise((resolve, reject) =>
        enqueue(
          queries.map(({ sql, parameters }) => [sql, parameters]),
          resolve,
          reject,
        ),
      ),
    close() {
      closed ??= (async () => {
        if (queued.length > 0 || inFlight !== null) {
          await new Promise<void>((resolve) => {
            drained = resolve
          })
        }
        const thread = worker
        worker = null
        if (thread === null) return
        const exited = new Promise((resolve) => thread.once('exit', resolve))
        // an unref'd thread would let a short-lived command's event loop empty before the exit arrives (Node exits
        // with 13, an unsettled top-level await): closing keeps the process alive until the thread has closed
        thread.ref()
        thread.postMessage('close' satisfies WriterRequest)
        await exited
      })()
      return closed
    },
  }
}
