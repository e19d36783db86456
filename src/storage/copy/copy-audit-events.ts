import type { Kysely, TableMetadata } from 'kysely'
import { AUDIT_COLUMNS } from '../sql/audit-rows.js'
import { runPooled, type SqlEngine } from '../sql/sql-database.js'
import type { SqlQuery } from '../sql/sql-statements.js'
import type { Tables } from '../sql/tables.js'
import { type Checksum, runningChecksum } from './checksum.js'
import { placeholderFor, type Read, valuesList } from './copy-statements.js'

/** The columns of `audit_events` (migrations 0002, 0003, 0011) but its id, which the target numbers itself. */
const COLUMNS = AUDIT_COLUMNS.split(', ')

/** Rows per insert: 8 columns × 4,000 rows stays under SQLite's 32,766 bound parameters. */
const ROWS_PER_INSERT = 4_000

export interface AuditCopy {
  /** Events written by this run (0 when the target held its own already). */
  copied: number
  /** Why the events were not copied, or null. */
  notCopied: string | null
  source: Checksum
  target: Checksum
}

/** The events after the id `id`, `columns` of each (AUDIT_COLUMNS, or what a store of an earlier version has). */
const after = (engine: SqlEngine, id: number, limit: number, columns = AUDIT_COLUMNS): SqlQuery => ({
  sql: `SELECT id, ${columns} FROM audit_events WHERE id > ${placeholderFor(engine)(1)}
    ORDER BY id LIMIT ${Math.trunc(limit)}`,
  parameters: [id],
})

/**
 * AUDIT_COLUMNS as a source's table has them (`tables`: its schema, read before its snapshot is taken): a store of a
 * version before migration 0003 (only read: never migrated by a copy) has no `omitted`, one before 0011 no `actor`,
 * which every one of its events holds as NULL.
 */
export function auditColumnsOf(tables: readonly TableMetadata[]): string {
  const table = tables.find((candidate) => candidate.name === 'audit_events')
  const present = new Set(table?.columns.map((column) => column.name))
  return COLUMNS.map((column) => (present.has(column) ? column : `NULL AS ${column}`)).join(', ')
}

/** One event as a line of the checksum: its columns in order, null as \N (no column holds a tab or newline). */
const line = (row: Record<string, unknown>) =>
  `${COLUMNS.map((column) => (row[column] === null ? '\\N' : String(row[column]))).join('\t')}\n`

/**
 * Copies the audit trail, when both stores have one (migration 0002) and the target's is empty: every event, in the
 * source's id order, in one transaction, so that an interrupted copy leaves none and a resumed one copies them all.
 * The target numbers the events itself, in the same order. A target that holds events of its own (--force) keeps
 * them, and gets none. Then both sides are read again and compared, as the accounts are.
 */
export async function copyAuditEvents(
  readSource: Read,
  readTarget: Read,
  source: { engine: SqlEngine; columns: string },
  target: { engine: SqlEngine; db: Kysely<Tables> },
  options: { resume: boolean; batchSize: number },
): Promise<AuditCopy | null> {
  const targetHeld = (await readTarget(after(target.engine, 0, 1))).length > 0
  let copied = 0
  if (!targetHeld) {
    await target.db.transaction().execute(async (transaction) => {
      await forEachBatch(readSource, source.engine, options.batchSize, source.columns, async (rows) => {
        await runPooled(
          transaction,
          `INSERT INTO audit_events (${AUDIT_COLUMNS}) VALUES ${valuesList(target.engine, rows.length, COLUMNS.length)}`,
          rows.flatMap((row) => COLUMNS.map((column) => normalize(column, row[column]))),
        )
        copied += rows.length
      })
    })
  }
  const notCopied = targetHeld && !options.resume ? 'the target holds audit events of its own' : null
  const source_ = await checksum(readSource, source.engine, options.batchSize, source.columns)
  const target_ = await checksum(readTarget, target.engine, options.batchSize, AUDIT_COLUMNS)
  return { copied, notCopied, source: source_, target: target_ }
}

async function forEachBatch(
  read: Read,
  engine: SqlEngine,
  batchSize: number,
  columns: string,
  handle: (rows: Record<string, unknown>[]) => Promise<void>,
): Promise<void> {
  let last = 0
  for (;;) {
    const rows = await read(after(engine, last, Math.min(batchSize, ROWS_PER_INSERT), columns))
    if (rows.length === 0) return
    await handle(rows)
    last = Number(rows[rows.length - 1]?.id)
  }
}

async function checksum(
  read: Read,
  engine: SqlEngine,
  batchSize: number,
  columns: string,
): Promise<Checksum> {
  const sum = runningChecksum()
  await forEachBatch(read, engine, batchSize, columns, async (rows) => {
    sum.add(rows.map((row) => line(normalizeRow(row))))
  })
  return sum.result()
}

/** PostgreSQL returns BIGINT as a string, MySQL's CHAR drops nothing here: each engine's value as one text. */
function normalize(column: string, value: unknown): unknown {
  if (value === null || value === undefined) return null
  return column === 'occurred_at' || column === 'omitted' ? Number(value) : String(value)
}

function normalizeRow(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(COLUMNS.map((column) => [column, normalize(column, row[column])]))
}
