import type { Kysely } from 'kysely'
import { AVATAR_COLUMNS } from '../sql/avatar-rows.js'
import { PROVIDER_LINK_COLUMNS } from '../sql/oauth-rows.js'
import type { SqlEngine } from '../sql/sql-database.js'
import type { Tables } from '../sql/tables.js'
import { copyKeyedTable, type KeyedTable, type RowsCopy } from './copy-keyed-table.js'
import type { Read } from './copy-statements.js'

/**
 * Every avatar, its image byte for byte, by its user id. An avatar is re-encoded to at most 512 × 512 pixels (about
 * 1 MiB as a PNG that does not compress): 4 of them, which mysql2 sends as hexadecimal text, stay well under
 * MariaDB's default max_allowed_packet (16 MiB).
 */
const avatars: KeyedTable = {
  name: 'avatars',
  columns: AVATAR_COLUMNS.split(', '),
  keyWidth: 1,
  integers: new Set(['created_at']),
  binaries: new Set(['data']),
  maxBatch: 4,
}

/** Every provider link, by (provider, subject): 5 columns × 5,000 rows stays under SQLite's bound parameters. */
const providerLinks: KeyedTable = {
  name: 'oauth_accounts',
  columns: PROVIDER_LINK_COLUMNS.split(', '),
  keyWidth: 2,
  integers: new Set(['created_at']),
  maxBatch: 5_000,
}

/**
 * Copies what belongs to the accounts beside their rows (migration 0006), after the accounts (their foreign keys
 * name them), when the source has it (null when it is of an earlier version): the avatars and the provider links,
 * each row for row and compared (copyKeyedTable). The one-time tickets (`oauth_tickets`) are not copied: each is a
 * provider sign-in in progress or an exchange code, good for minutes: a sign-in under way while the service moves to
 * the target is started again.
 */
export async function copyAccountParts(
  readSource: Read,
  readTarget: Read,
  source: { engine: SqlEngine; tables: readonly string[] },
  target: { engine: SqlEngine; db: Kysely<Tables> },
  options: { batchSize: number },
): Promise<{ avatars: RowsCopy | null; providerLinks: RowsCopy | null }> {
  const copy = (table: KeyedTable) =>
    copyKeyedTable(table, readSource, readTarget, source, target, options.batchSize)
  return { avatars: await copy(avatars), providerLinks: await copy(providerLinks) }
}
