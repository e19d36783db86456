// The SQLite writer thread of sqlite-writer.ts. JavaScript with JSDoc types (checked like the rest), so that Node
// runs this very file as the worker's module, from src/ under the tests and from dist/ in production.
import { createRequire } from 'node:module'
import { parentPort, workerData } from 'node:worker_threads'
import { applyPragmas } from './apply-pragmas.js'
import { createStatementCache } from './statement-cache.js'

/** @import BetterSqlite3 from 'better-sqlite3' */
/** @import { QueuedWrite, ThreadError, WriterReply, WriterRequest, WriterThreadData } from './sqlite-writer-protocol.js' */

if (parentPort === null) throw new Error('sqlite-writer-thread.js runs as a worker thread only')
const port = parentPort
const { driver, filename, pragmas } = /** @type {WriterThreadData} */ (workerData)

/** @param {WriterReply} reply */
const send = (reply) => port.postMessage(reply)

/**
 * @param {unknown} error
 * @returns {ThreadError}
 */
function describe(error) {
  const { message, code } = /** @type {{ message?: unknown, code?: unknown }} */ (error ?? {})
  return { message: String(message || error), ...(typeof code === 'string' ? { code } : {}) }
}

/** @returns {BetterSqlite3.Database | null} */
function open() {
  try {
    const Driver = /** @type {typeof BetterSqlite3} */ (createRequire(import.meta.url)(driver))
    const database = new Driver(filename)
    applyPragmas(database, pragmas)
    return database
  } catch (error) {
    // reported, then the thread ends: the parent starts a new one for the next write
    send({ fatal: describe(error) })
    port.close()
    return null
  }
}

/** @param {BetterSqlite3.Database} database */
function serve(database) {
  const statements = createStatementCache(database)
  // a transaction inside the group's transaction is a savepoint: a failing write is rolled back alone, all its
  // statements with it
  const inSavepoint = database.transaction(
    /** @param {QueuedWrite} write */
    (write) => write.map(([sql, parameters]) => statements.run(sql, parameters)),
  )
  const commitGroup = database.transaction(
    /** @param {QueuedWrite[]} writes */
    (writes) =>
      writes.map((write) => {
        try {
          return { results: inSavepoint(write) }
        } catch (error) {
          // an error that ended the whole transaction (a full disk, an I/O error) fails the whole group
          if (!database.inTransaction) throw error
          return { error: describe(error) }
        }
      }),
  )
  port.on('message', (/** @type {WriterRequest} */ request) => {
    if (request === 'close') {
      database.close()
      send({ closed: true })
      port.close()
      return
    }
    /** @type {WriterReply} */
    let reply
    try {
      reply = { outcomes: commitGroup.immediate(request) }
    } catch (error) {
      reply = { error: describe(error) }
    }
    send(reply)
  })
}

const database = open()
if (database !== null) serve(database)
