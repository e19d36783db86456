import type { StorageCall } from '../storage-call.js'
import type { SessionStore, StoredSession } from '../stores.js'
import { refusedForMissingAccount } from './missing-account.js'
import { SINGLE_SLOT, toSession } from './session-rows.js'
import type { SqlDatabase } from './sql-database.js'
import type { SqlQuery } from './sql-statements.js'

/**
 * SessionStore in the `sessions` table of any SQL engine (migrations 0004, 0010), with that engine's statements. Every
 * write is one statement (SqlDatabase.write): a start is an upsert on the user's slot, then, only when a read says
 * there is something to end, one DELETE; a rotation is one conditional UPDATE. A read is far cheaper than a write
 * (no transaction, no flush to disk), and most starts find nothing to end: in single mode the user's one session is
 * the slot the upsert replaces, and per device the limit is seldom reached.
 */
export function createSqlSessionStore(database: SqlDatabase, call: StorageCall): SessionStore {
  const { statements } = database
  const read = async (operation: string, { sql, parameters }: SqlQuery) =>
    (await call(operation, () => database.run(sql, parameters))).rows
  const write = async (operation: string, { sql, parameters }: SqlQuery) =>
    (await call(operation, (attempt) => database.write(sql, parameters, attempt))).changes
  const findOne = async (query: SqlQuery): Promise<StoredSession | null> => {
    const [row] = await read('sessions.find', query)
    return row === undefined ? null : toSession(row)
  }

  return {
    async start(session, limit, now) {
      const single = limit === 'single'
      const upsert = write(
        'sessions.start',
        statements.startSession(session, single ? SINGLE_SLOT : session.id),
      )
      // in single mode, whether sessions of the per-device mode are there to end: read beside the upsert, which
      // never touches them, so that a login waits for one round trip, not two (measured: 0.35 ms more per login on
      // PostgreSQL and MySQL read after it)
      const besideSingle = single
        ? read('sessions.start', statements.findSessionBesideSingle(session.userId))
        : null
      // its failure is reported below, unless the upsert's comes first
      besideSingle?.catch(() => {})
      try {
        await upsert
      } catch (error) {
        // the foreign key refuses the session of an account deleted since the caller read it
        if (await refusedForMissingAccount(database, call, error, session.userId)) return false
        throw error
      }
      if (limit === 'single') {
        if (((await besideSingle) ?? []).length > 0)
          await write('sessions.start', statements.endSessionsBesideSingle(session.userId))
        return true
      }
      // read after the insert, so that of concurrent starts the last to read sees every session the others stored
      const [counted] = await read('sessions.start', statements.countSessions(session.userId))
      const stored = Number(counted?.sessions ?? 0)
      const soonest = counted?.soonest == null ? null : Number(counted.soonest)
      if (stored > limit || (soonest !== null && soonest <= now))
        await write('sessions.start', statements.evictSessions(session.userId, limit, now))
      return true
    },
    async rotate(userId, currentDigest, next, now) {
      return (
        (await write('sessions.rotate', statements.rotateSession(userId, currentDigest, next, now))) === 1
      )
    },
    find(userId, by, now) {
      if ('id' in by) return findOne(statements.findSessionById(userId, by.id, now))
      if ('digest' in by) return findOne(statements.findSessionByDigest(userId, by.digest, now))
      return findOne(statements.findSessionByPreviousDigest(userId, by.previousDigest, now))
    },
    async list(userId, now) {
      return (await read('sessions.list', statements.listSessions(userId, now))).map(toSession)
    },
    async markSecondFactor(userId, sessionId, now) {
      return (
        (await write(
          'sessions.markSecondFactor',
          statements.markSessionSecondFactor(userId, sessionId, now),
        )) === 1
      )
    },
    async end(userId, sessionId, now) {
      return (await write('sessions.end', statements.endSession(userId, sessionId, now))) === 1
    },
    endAll(userId, now, except) {
      return write('sessions.endAll', statements.endSessions(userId, except ?? '', now))
    },
    async endAllReturningIds(userId, now, except) {
      const queries = statements.endSessionsReturningIds(userId, except ?? '', now)
      const [ended] = await call('sessions.endAllReturningIds', (attempt) =>
        database.writeAll(queries, attempt),
      )
      return (ended?.rows ?? []).map((row) => String(row.id))
    },
    // the sessions go now; the foreign key refuses any later one once the account's row is deleted, and deleting
    // the row deletes a session started in between (ON DELETE CASCADE)
    async retire(userId) {
      await write('sessions.retire', statements.deleteSessions(userId))
    },
    async reinstate() {},
  }
}
