import type { SecurityEvent, SecurityEventReason, SecurityEventType } from '../../security-event.js'
import type { StorageCall } from '../storage-call.js'
import type { AuditStore, StoredAuditEvent } from '../stores.js'
import { AUDIT_PAGE_START, MAX_AUDIT_ROWS, SQLITE_AUDIT_BATCH_ROWS } from './audit-rows.js'
import type { SqlDatabase } from './sql-database.js'

/** Rows one pruning statement deletes at most: each is a short write, so SQLite's writer and the servers' locks
 * are never held for long, however much is due. */
export const PRUNE_BATCH = 1_000

interface AuditRow {
  occurred_at: number | string
  event: string
  user_id: string | null
  client_address: string | null
  request_id: string | null
  reason: string | null
  omitted: number | string | null
  actor: string | null
}

/** AuditStore in the `audit_events` table of any SQL engine, with that engine's statements. */
export function createSqlAuditStore(database: SqlDatabase, call: StorageCall): AuditStore {
  const { statements } = database
  return {
    batchRows: database.engine === 'sqlite' ? SQLITE_AUDIT_BATCH_ROWS : MAX_AUDIT_ROWS,
    async append(events) {
      for (let start = 0; start < events.length; start += MAX_AUDIT_ROWS) {
        const { sql, parameters } = statements.appendAuditEvents(events.slice(start, start + MAX_AUDIT_ROWS))
        await call('audit.append', (attempt) => database.write(sql, parameters, attempt))
      }
    },
    async list({ userId, since = 0, limit = Number.MAX_SAFE_INTEGER }) {
      const { sql, parameters } = statements.listAuditEvents(userId, since, limit)
      const { rows } = await call('audit.list', () => database.run(sql, parameters))
      return (rows as unknown as AuditRow[]).map(toEvent)
    },
    async page({ userId, kind, since = 0, after, limit }) {
      const { sql, parameters } = statements.pageAuditEvents(
        { userId, kind },
        since,
        after ?? { at: AUDIT_PAGE_START, id: AUDIT_PAGE_START },
        limit,
      )
      const { rows } = await call('audit.page', () => database.run(sql, parameters))
      return (rows as unknown as Array<AuditRow & { id: number | string }>).map(toStoredEvent)
    },
    async prune(before) {
      let deleted = 0
      for (;;) {
        const { sql, parameters } = statements.pruneAuditEvents(before, PRUNE_BATCH)
        const { changes } = await call('audit.prune', (attempt) => database.write(sql, parameters, attempt))
        deleted += changes
        if (changes < PRUNE_BATCH) return deleted
      }
    },
    async eraseClientAddresses(userId) {
      const { sql, parameters } = statements.eraseAuditClientAddresses(userId)
      const { changes } = await call('audit.eraseClientAddresses', (attempt) =>
        database.write(sql, parameters, attempt),
      )
      return changes
    },
  }
}

function toEvent(row: AuditRow): SecurityEvent {
  return {
    // PostgreSQL returns a BIGINT as a string
    at: Number(row.occurred_at),
    type: row.event as SecurityEventType,
    userId: row.user_id,
    clientAddress: row.client_address,
    requestId: row.request_id,
    reason: row.reason as SecurityEventReason | null,
    ...(row.omitted === null ? {} : { omitted: Number(row.omitted) }),
    ...(row.actor === null ? {} : { actor: row.actor }),
  }
}

/** A row of a page, its id as text (PostgreSQL returns a BIGINT as a string, the others as a number). */
function toStoredEvent(row: AuditRow & { id: number | string }): StoredAuditEvent {
  return { id: String(row.id), ...toEvent(row) }
}
