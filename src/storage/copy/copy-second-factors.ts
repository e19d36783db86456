import type { Kysely } from 'kysely'
import { FACTOR_INSERT_COLUMNS } from '../sql/factor-rows.js'
import type { SqlEngine } from '../sql/sql-database.js'
import type { Tables } from '../sql/tables.js'
import { copyKeyedTable, type KeyedTable, type RowsCopy } from './copy-keyed-table.js'
import type { Read } from './copy-statements.js'

/**
 * Every second factor, pending ones too, by its id, with its credential's digest (the unique index of migration
 * 0009, the same SHA-256 on every engine): 15 columns × 1,000 rows stays under SQLite's bound parameters, and 1,000
 * passkeys of at most 4 KiB under MySQL's smallest default max_allowed_packet (16 MiB).
 */
const factors: KeyedTable = {
  name: 'mfa_factors',
  columns: FACTOR_INSERT_COLUMNS.split(', '),
  keyWidth: 1,
  integers: new Set(['last_step', 'counter', 'created_at', 'last_used_at']),
  flags: new Set(['confirmed', 'backed_up']),
  maxBatch: 1_000,
}

/** Every unused recovery code, by (user_id, digest): its keyed digest works on the target as it did on the source. */
const recoveryCodes: KeyedTable = {
  name: 'mfa_recovery_codes',
  columns: ['user_id', 'digest'],
  keyWidth: 2,
  integers: new Set(),
  maxBatch: 5_000,
}

/**
 * Every key the service keeps (sealed by the service's secret, which the target's service shares), by name. A target
 * that holds a key of that name already keeps its own, and verification then reports the difference: the service
 * would not open what the other sealed.
 */
const serviceKeys: KeyedTable = {
  name: 'service_keys',
  columns: ['name', 'value'],
  keyWidth: 1,
  integers: new Set(),
  maxBatch: 1_000,
}

/**
 * Copies the second factors, the recovery codes and the service keys (migration 0009), after the accounts (the
 * factors' and codes' foreign keys name them), when the source has them (null when it is of an earlier version):
 * each table row for row and compared (copyKeyedTable), so that nobody's second factor is lost in a move, nor a
 * recovery code used on the source usable again.
 */
export async function copySecondFactors(
  readSource: Read,
  readTarget: Read,
  source: { engine: SqlEngine; tables: readonly string[] },
  target: { engine: SqlEngine; db: Kysely<Tables> },
  options: { batchSize: number },
): Promise<{ factors: RowsCopy | null; recoveryCodes: RowsCopy | null; serviceKeys: RowsCopy | null }> {
  const copy = (table: KeyedTable) =>
    copyKeyedTable(table, readSource, readTarget, source, target, options.batchSize)
  return {
    factors: await copy(factors),
    recoveryCodes: await copy(recoveryCodes),
    serviceKeys: await copy(serviceKeys),
  }
}
