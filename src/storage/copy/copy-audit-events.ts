import { createHash } from 'node:crypto'
import { CompiledQuery, type Kysely } from 'kysely'
import type { SqlEngine } from '../sql/sql-database.js'
import type { SqlQuery } from '../sql/sql-statements.js'
import type { Tables } from '../sql/tables.js'
import type { Checksum } from './copy-store.js'

type Read = (query: SqlQuery) => Promise<Record<string, unknown>[]>

/** The columns of `audit_events` (migrations 0002) but its id, which the target numbers itself. */
const COLUMNS = ['occurred_at', 'event', 'user_id', 'client_address', 'request_id', 'reason'] as const

/** Rows per insert: 6 columns × 4,000 rows stays under SQLite's 32,766 bound parameters. */
const ROWS_PER_INSERT = 4_000

export interface AuditCopy {
  /** Events written by this run (0 when the target held its own already). */
  copied: number
  /** Why the events were not copied, or null. */
  notCopied: string | null
  source: Checksum
  target: Checksum
}

const placeholderFor = (engine: SqlEngine) => (index: number) => (engine === 'postgres' ? `$${index}` : '?')

const after = (engine: SqlEngine, id: number, limit: number): SqlQuery => ({
  sql: `SELECT id, ${COLUMNS.join(', ')} FROM audit_events WHERE id > ${placeholderFor(engine)(1)}
    ORDER BY id LIMIT ${Math.trunc(limit)}`,
  parameters: [id],
})

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
  source: { engine: SqlEngine },
  target: { engine: SqlEngine; db: Kysely<Tables> },
  options: { resume: boolean; batchSize: number },
): Promise<AuditCopy | null> {
  const readTarget: Read = async (query) =>
    (
      await target.db.executeQuery<Record<string, unknown>>(
        CompiledQuery.raw(query.sql, [...query.parameters]),
      )
    ).rows as Record<string, unknown>[]
  const targetHeld = (await readTarget(after(target.engine, 0, 1))).length > 0
  let copied = 0
  if (!targetHeld) {
    await target.db.transaction().execute(async (transaction) => {
      await forEachBatch(readSource, source.engine, options.batchSize, async (rows) => {
        const placeholder = placeholderFor(target.engine)
        const values = rows
          .map(
            (_, row) =>
              `(${COLUMNS.map((__, column) => placeholder(row * COLUMNS.length + column + 1)).join(', ')})`,
          )
          .join(', ')
        await transaction.executeQuery(
          CompiledQuery.raw(
            `INSERT INTO audit_events (${COLUMNS.join(', ')}) VALUES ${values}`,
            rows.flatMap((row) => COLUMNS.map((column) => normalize(column, row[column]))),
          ),
        )
        copied += rows.length
      })
    })
  }
  const notCopied = targetHeld && !options.resume ? 'the target holds audit events of its own' : null
  const source_ = await checksum(readSource, source.engine, options.batchSize)
  const target_ = await checksum(readTarget, target.engine, options.batchSize)
  return { copied, notCopied, source: source_, target: target_ }
}

async function forEachBatch(
  read: Read,
  engine: SqlEngine,
  batchSize: number,
  handle: (rows: Record<string, unknown>[]) => Promise<void>,
): Promise<void> {
  let last = 0
  for (;;) {
    const rows = await read(after(engine, last, Math.min(batchSize, ROWS_PER_INSERT)))
    if (rows.length === 0) return
    await handle(rows)
    last = Number(rows[rows.length - 1]?.id)
  }
}

async function checksum(read: Read, engine: SqlEngine, batchSize: number): Promise<Checksum> {
  const hash = createHash('sha256')
  let count = 0
  await forEachBatch(read, engine, batchSize, async (rows) => {
    for (const row of rows) hash.update(line(normalizeRow(row)))
    count += rows.length
  })
  return { count, sha256: hash.digest('hex') }
}

/** PostgreSQL returns BIGINT as a string, MySQL's CHAR drops nothing here: each engine's value as one text. */
function normalize(column: string, value: unknown): unknown {
  if (value === null || value === undefined) return null
  return column === 'occurred_at' ? Number(value) : String(value)
}

function normalizeRow(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(COLUMNS.map((column) => [column, normalize(column, row[column])]))
}
