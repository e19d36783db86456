import type { Kysely, TableMetadata } from 'kysely'
import { EMAIL_CODE_COLUMNS, OUTBOX_COLUMNS } from '../sql/mail-rows.js'
import type { SqlEngine } from '../sql/sql-database.js'
import type { Tables } from '../sql/tables.js'
import { copyKeyedTable, type KeyedTable, type RowsCopy } from './copy-keyed-table.js'
import type { Read } from './copy-statements.js'

/**
 * The keys that have an unexpired code, each with every code it holds (a code's digest is keyed by the service's
 * secret, so it works on the target as it did on the source): 5 columns × 5,000 rows stays under SQLite's 32,766
 * bound parameters, and 5,000 rows of at most 1,024 characters of codes under MySQL's smallest default
 * max_allowed_packet (16 MiB). `select` reads a source's rows as these columns (emailCodesSelect).
 */
const emailCodes = (now: number, select: string): KeyedTable => ({
  name: 'email_codes',
  columns: EMAIL_CODE_COLUMNS.split(', '),
  keyWidth: 3,
  integers: new Set(['expires_at']),
  maxBatch: 5_000,
  copiedOnly: { sql: 'expires_at >', value: now },
  sourceSelect: select,
})

/**
 * How the copy reads the source's `email_codes` as the columns of migration 0007: as they are, or, from a source of
 * an earlier version (one code per row: code_digest, tries), each row's code as the one code of its key, as the
 * migration carries it over.
 */
function emailCodesSelect(tables: readonly TableMetadata[], engine: SqlEngine): string {
  const columns = columnsOf(tables, 'email_codes')
  if (columns.has('codes') || !columns.has('code_digest')) return EMAIL_CODE_COLUMNS
  const codes =
    engine === 'mysql'
      ? "CONCAT(code_digest, ':', expires_at, ':', tries)"
      : "code_digest || ':' || expires_at || ':' || tries"
  return `address, purpose, user_id, ${codes} AS codes, expires_at`
}

/** The names of a source table's columns. */
const columnsOf = (tables: readonly TableMetadata[], name: string): Set<string> =>
  new Set(tables.find((table) => table.name === name)?.columns.map((column) => column.name))

/**
 * Every message, as it waits, mail and webhook events alike: its lane (migration 0012), its attempts, when it is due
 * and (migration 0008) its code's expiry, but not its claim, which belongs to a sender of the source (its lease is for
 * the source's processes; on the target the message is unheld, and delivered by the target's sender even if the
 * source's was delivering it: its id, the Message-ID or the `webhook-id`, lets a duplicate be recognized). A source
 * of a version before 0012 has mail only (`mail` as the lane); one before 0008 has no code_expires_at: its messages
 * are copied as such a store's sender sees them, none known to be a code (the payload still says it, and its expiry
 * still holds). 200 messages of up to 32 KiB (an event's bound) stay well under MySQL's smallest default
 * max_allowed_packet (16 MiB).
 */
const outbox = (present: ReadonlySet<string>): KeyedTable => {
  const columns = OUTBOX_COLUMNS.split(', ')
  const absent = (column: string) => (column === 'lane' ? "'mail' AS lane" : `NULL AS ${column}`)
  return {
    name: 'outbox',
    columns,
    sourceSelect: columns.map((column) => (present.has(column) ? column : absent(column))).join(', '),
    keyWidth: 1,
    integers: new Set(['created_at', 'attempts', 'next_attempt_at', 'code_expires_at']),
    maxBatch: 200,
  }
}

/**
 * The webhook URLs a receiver disabled with a 410 (migration 0012), by their digests: on the target they stay
 * disabled until `tessera webhooks enable`.
 */
const disabledWebhookUrls: KeyedTable = {
  name: 'webhook_disabled_urls',
  columns: ['url_digest', 'disabled_at'],
  keyWidth: 1,
  integers: new Set(['disabled_at']),
  maxBatch: 1_000,
}

/**
 * Copies the e-mail codes and the outbox (migration 0005) and the disabled webhook URLs (migration 0012), when the
 * source has them (null when it is of an earlier version): a message queued on the source, which its answer said was
 * sent or made, is delivered from the target. Each table is copied row for row and compared (copyKeyedTable).
 * `source.schema` is the source's, read before its snapshot.
 */
export async function copyMail(
  readSource: Read,
  readTarget: Read,
  source: { engine: SqlEngine; tables: readonly string[]; schema: readonly TableMetadata[] },
  target: { engine: SqlEngine; db: Kysely<Tables> },
  options: { batchSize: number; now: number },
): Promise<{
  emailCodes: RowsCopy | null
  outbox: RowsCopy | null
  disabledWebhookUrls: RowsCopy | null
}> {
  const copy = (table: KeyedTable) =>
    copyKeyedTable(table, readSource, readTarget, source, target, options.batchSize)
  return {
    emailCodes: await copy(emailCodes(options.now, emailCodesSelect(source.schema, source.engine))),
    outbox: await copy(outbox(columnsOf(source.schema, 'outbox'))),
    disabledWebhookUrls: await copy(disabledWebhookUrls),
  }
}
