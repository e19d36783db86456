import type { SecurityEvent } from '../../security-event.js'

/**
 * The columns of `audit_events` that hold an event, in the order of the INSERT and the SELECT (migrations 0002, 0003:
 * `omitted` counts what an `events_omitted` row stands for, and 0011: `actor`, the admin of an admin's act).
 */
export const AUDIT_COLUMNS = 'occurred_at, event, user_id, client_address, request_id, reason, omitted, actor'

/** At most this many rows per INSERT: the sink's batches fit in one, and SQLite keeps one text per row count. */
export const MAX_AUDIT_ROWS = 500

/**
 * AuditStore.batchRows of SQLite. On a database server (PostgreSQL, MySQL) it is MAX_AUDIT_ROWS: a batch of 500 costs
 * PostgreSQL's client and server 19 µs a row where batches of 200 cost 25, and a refresh makes an event, so under a
 * flood of them the trail was a fifth of a refresh's work there. On SQLite batches of 500 gained nothing and raised
 * the peak RSS under login saturation by 7 to 16 MiB (docs/performance.md, issue 34, ninth session).
 */
export const SQLITE_AUDIT_BATCH_ROWS = 200

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
    event.actor ?? null,
  ])
}

/**
 * The values of the events by column, one array per column of AUDIT_COLUMNS: what PostgreSQL inserts with one
 * statement over arrays (`unnest`), eight parameters whatever the number of rows.
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
    events.map((event) => event.actor ?? null),
  ]
}

/** `(?, ?, ?, ?, ?, ?, ?, ?), …` for `rows` rows: the VALUES of a multi-row INSERT with `?` placeholders. */
export function auditValuesList(rows: number): string {
  return Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')
}

/** The filters of a page of the audit trail (AuditStore.page) that its statement's text depends on. */
export interface AuditPageFilter {
  user: boolean
  kind: boolean
}

/**
 * A page of the audit trail, newest first, with `?` placeholders: the user's and the kind's conditions when the
 * filter has them, then the time from `since`, then the position after which the page starts, written so that an
 * index on the time (after the user or the kind) serves it as one range on every engine: `occurred_at <= at AND
 * (occurred_at < at OR id < id)` (MySQL uses no index for the row comparison `(occurred_at, id) < (at, id)`). The
 * parameters, in order: the user, the kind (each when filtered), since, at, at, id, limit.
 */
export function auditPageText(filter: AuditPageFilter): string {
  const conditions = [
    ...(filter.user ? ['user_id = ?'] : []),
    ...(filter.kind ? ['event = ?'] : []),
    'occurred_at >= ?',
    'occurred_at <= ?',
    '(occurred_at < ? OR id < ?)',
  ]
  return `SELECT id, ${AUDIT_COLUMNS} FROM audit_events WHERE ${conditions.join(' AND ')}
    ORDER BY occurred_at DESC, id DESC LIMIT ?`
}

/** The position of a first page: after every event there can be (ids and times stay far below it). */
export const AUDIT_PAGE_START = Number.MAX_SAFE_INTEGER

function clip(value: string | null): string | null {
  if (value === null || value.length <= TEXT_COLUMN_WIDTH) return value
  // code points, as the servers' VARCHAR counts them
  return Array.from(value).slice(0, TEXT_COLUMN_WIDTH).join('')
}
