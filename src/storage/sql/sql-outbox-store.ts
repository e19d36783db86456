import type { StorageCall } from '../storage-call.js'
import type { OutboxStore } from '../stores.js'
import { inClaimOrder, toOutboxCount, toOutboxMessage } from './mail-rows.js'
import type { SqlDatabase } from './sql-database.js'
import type { SqlQuery } from './sql-statements.js'

/**
 * OutboxStore in the `outbox` table of any SQL engine (migrations 0005, 0008, 0012), with that engine's statements.
 * A message is held by a claim until its lease ends, which its claimant renews while it works on it: the claim is
 * one UPDATE (one for each order on MySQL) that sets the claimant (a random value of the call) on the due, unheld
 * rows of one lane, so a message goes to one claimant; the sender then removes it, or fails or releases it, each
 * only while its claimant still holds it.
 */
export function createSqlOutboxStore(database: SqlDatabase, call: StorageCall): OutboxStore {
  const { statements } = database
  const read = async (operation: string, { sql, parameters }: SqlQuery) =>
    (await call(operation, () => database.run(sql, parameters))).rows
  const write = (operation: string, { sql, parameters }: SqlQuery) =>
    call(operation, (attempt) => database.write(sql, parameters, attempt))

  return {
    async enqueue(message) {
      await write('outbox.enqueue', statements.enqueueOutbox(message))
    },
    async enqueueAll(messages) {
      if (messages.length === 0) return
      const queries = messages.map((message) => statements.enqueueOutbox(message))
      await call('outbox.enqueueAll', (attempt) => database.writeAll(queries, attempt))
    },
    async claim(lane, claimant, now, leaseUntil, limit) {
      // every instance's senders poll every second: an idle poll costs one read of the due index, and no write (a
      // write is a transaction, and on SQLite an fsync)
      if ((await read('outbox.claim', statements.findDueOutbox(lane, now))).length === 0) return []
      const returned: Record<string, unknown>[] = []
      let left = limit
      for (const step of statements.claimOutbox(lane, claimant, now, leaseUntil)) {
        if (left <= 0) break
        const { rows, changes } = await write('outbox.claim', step(left))
        returned.push(...rows)
        left -= changes
      }
      const claimed = statements.claimedOutbox(lane, claimant, now)
      if (claimed === null || left === limit) return inClaimOrder(returned.map(toOutboxMessage))
      return inClaimOrder((await read('outbox.claim', claimed)).map(toOutboxMessage))
    },
    async renew(ids, claimant, leaseUntil) {
      if (ids.length === 0) return []
      const { rows } = await write('outbox.renew', statements.renewOutbox(ids, claimant, leaseUntil))
      const held = statements.heldOutbox(ids, claimant)
      return (held === null ? rows : await read('outbox.renew', held)).map((row) => String(row.id))
    },
    async remove(id, claimant) {
      return (await write('outbox.remove', statements.removeOutbox(id, claimant))).changes === 1
    },
    async failed(id, claimant, nextAttemptAt) {
      await write('outbox.failed', statements.failOutbox(id, claimant, nextAttemptAt))
    },
    async release(ids, claimant) {
      if (ids.length === 0) return
      await write('outbox.release', statements.releaseOutbox(ids, claimant))
    },
    async postpone(lane, recipient, until, now) {
      return (await write('outbox.postpone', statements.postponeOutbox(lane, recipient, until, now))).changes
    },
    async deleteFor(userId, address) {
      return (await write('outbox.deleteFor', statements.deleteOutbox(userId, address))).changes
    },
    async stats(lane) {
      const [row] = await read('outbox.stats', statements.outboxStats(lane))
      return toOutboxCount(row)
    },
    async statsByRecipient(lane) {
      const rows = await read('outbox.statsByRecipient', statements.outboxStatsByRecipient(lane))
      return new Map(rows.map((row) => [String(row.recipient), toOutboxCount(row)]))
    },
  }
}
