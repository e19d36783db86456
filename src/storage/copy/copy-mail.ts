import type { Kysely, TableMetadata } from 'kysely'
import { EMAIL_CODE_COLUMNS, OUTBOX_COLUMNS } from '../sql/mail-rows.js'
import type { SqlEngine } from '../sql/sql-database.js'
import type { Tables } from '../sql/tables.js'
import { copyKeyedTable, type KeyedTable, type RowsCopy } from './copy-keyed-table.js'
import type { Read } from './copy-statements.js'

/**
 * The unexpired codes (a code's digest is keyed by the service's secret, so it works on the target as it did on the
 * source): 6 columns × 5,000 rows stays under SQLite's 32,766 bound parameters.
 */
const emailCodes = (now: number): KeyedTable => ({
  name: 'email_codes',
  columns: EMAIL_CODE_COLUMNS.split(', '),
  keyWidth: 3,
  integers: new Set(['expires_at', 'tries']),
  maxBatch: 5_000,
  copiedOnly: { sql: 'expires_at >', value: now },
})

/**
 * Every message, as it waits: its attempts, when it is due and (migration 0008) its code's expiry, but not its claim,
 * which belongs to a sender of the source (its lease is for the source's processes; on the target the message is
 * unheld, and delivered by the target's sender even if the source's was delivering it: its id, the Message-ID, lets a
 * duplicate be recognized). A source of a version before 0008 has no code_expires_at: its messages are copied as
 * such a store's sender sees them, none known to be a code (the payload still says it, and its expiry still holds).
 * 500 messages of up to 8 KiB stay well under MySQL's smallest default max_allowed_packet (16 MiB).
 */
const outbox = (sourceColumns: readonly string[] | undefined): KeyedTable => {
  const columns = OUTBOX_COLUMNS.split(', ')
  const present = new Set(sourceColumns)
  return {
    name: 'outbox',
    columns,
    sourceColumns: columns.map((column) => (present.has(column) ? column : `NULL AS ${column}`)).join(', '),
    keyWidth: 1,
    integers: new Set(['created_at', 'attempts', 'next_attempt_at', 'code_expires_at']),
    maxBatch: 500,
  }
}

/**
 * Copies the e-mail codes and the outbox (migration 0005), when the source has them (null when it is of an earlier
 * version): a message queued on the source, which its answer said was sent, is delivered from the target. Each table
 * is copied row for row and compared (copyKeyedTable). `source.schema` is the source's, read before its snapshot.
 */
export async function copyMail(
  readSource: Read,
  readTarget: Read,
  source: { engine: SqlEngine; tables: readonly string[]; schema: readonly TableMetadata[] },
  target: { engine: SqlEngine; db: Kysely<Tables> },
  options: { batchSize: number; now: number },
): Promise<{ emailCodes: RowsCopy | null; outbox: RowsCopy | null }> {
  const copy = (table: KeyedTable) =>
    copyKeyedTable(table, readSource, readTarget, source, target, options.batchSize)
  const outboxColumns = source.schema
    .find((table) => table.name === 'outbox')
    ?.columns.map((column) => column.name)
  return { emailCodes: await copy(emailCodes(options.now)), outbox: await copy(outbox(outboxColumns)) }
}
