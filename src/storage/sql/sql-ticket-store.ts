import type { StorageCall } from '../storage-call.js'
import type { TicketStore } from '../stores.js'
import type { SqlDatabase } from './sql-database.js'
import type { SqlQuery } from './sql-statements.js'

/** Tickets one pruning statement deletes at most: each is a short write, however many have expired. */
const PRUNE_BATCH = 1_000

/** TicketStore in the `oauth_tickets` table of any SQL engine (migration 0006), with that engine's statements. */
export function createSqlTicketStore(database: SqlDatabase, call: StorageCall): TicketStore {
  const { statements } = database
  const write = async (operation: string, { sql, parameters }: SqlQuery) =>
    (await call(operation, (attempt) => database.write(sql, parameters, attempt))).changes

  return {
    async put(ticket) {
      await write('tickets.put', statements.putTicket(ticket))
    },
    // A read, then a DELETE by the key, whose count decides: of concurrent takes, every one may read the payload,
    // but the row lock (SQLite: the one writer) lets one delete the row and the others find it gone, so only the
    // one whose DELETE changed the row answers with it. MySQL has no DELETE … RETURNING to do both in one statement.
    async take(digest, kind, now) {
      const { sql, parameters } = statements.findTicket(digest, kind, now)
      const [row] = (await call('tickets.take', () => database.run(sql, parameters))).rows
      if (row === undefined) return null
      if ((await write('tickets.take', statements.deleteTicket(digest, kind))) !== 1) return null
      return String(row.payload)
    },
    async prune(now) {
      let deleted = 0
      for (;;) {
        const changes = await write('tickets.prune', statements.pruneTickets(now, PRUNE_BATCH))
        deleted += changes
        if (changes < PRUNE_BATCH) return deleted
      }
    },
  }
}
