import type { SecurityEvent } from '../../security-event.js'

/**
 * The columns of `audit_events` that hold an event, in the order of the INSERT and the SELECT (migrations 0002 and
 * 0003: `omitted` counts what an `events_omitted` row stands for).
 */
export const AUDIT_COLUMNS = 'occurred_at, event, user_id, client_address, request_id, reason, omitted'

/** At most this many rows per INSERT: the sink's batches fit in one, and SQLite keeps one text per row count. */
export const MAX_AUDIT_ROWS = 500

/** The width of the client_address and request_id columns (migrations/<engine>/0002_create_audit_events.sql). */
const TEXT_COLUMN_WIDTH = 64

/**
 * The values of the events' rows, row after row in AUDIT_COLUMNS order. A client address comes from the socket or,
 * behind TRUST_PROXY, from a header the proxy forwarded, so it is cut to the column's width rather than failing the
 * whole batch.
 */
export function auditRowValues(events: readonly SecurityEvent[]): unknown[] {
  return events.flatMap((event) => [
    event.at,
    event.type,
    event.userId,
    clip(event.clientAddress),
    clip(event.requestId),
    event.reason,
    event.omitted ?? null,
  ])
}

/**
 * The values of the events by column, one array per column of AUDIT_COLUMNS: what PostgreSQL inserts with one
 * statement over arrays (`unnest`), seven parameters whatever the number of rows.
 */
export function auditColumnValues(events: readonly SecurityEvent[]): unknown[][] {
  return [
    events.map((event) => event.at),
    events.map((event) => event.type),
    events.map((event) => event.userId),
    events.map((event) => clip(event.clientAddress)),
    events.map((event) => clip(event.requestId)),
    events.map((event) => event.reason),
    events.map((event) => event.omitted ?? null),
  ]
}

/** `(?, ?, ?, ?, ?, ?, ?), …` for `rows` rows: the VALUES of a multi-row INSERT with `?` placeholders. */
export function auditValuesList(rows: number): string {
  return Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?, ?)').join(', ')
}

function clip(value: string | null): string | null {
  if (value === null || value.length <= TEXT_COLUMN_WIDTH) return value
  // code points, as the servers' VARCHAR counts them
  return Array.from(value).slice(0, TEXT_COLUMN_WIDTH).join('')
}
