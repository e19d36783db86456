import { createHash } from 'node:crypto'
import type { FactorType, StoredFactor } from '../stores.js'

/**
 * The columns of an `mfa_factors` row that hold a StoredFactor (migration 0009), in the order of every SELECT and of
 * factorValues; an INSERT also names credential_digest (FACTOR_INSERT_COLUMNS).
 */
export const FACTOR_COLUMNS =
  'id, user_id, type, name, confirmed, secret, last_step, credential_id, public_key, counter, backed_up, transports, created_at, last_used_at'

/** The columns an INSERT of a factor names, in the order of factorValues. */
export const FACTOR_INSERT_COLUMNS = `${FACTOR_COLUMNS}, credential_digest`

/** The placeholders of FACTOR_INSERT_COLUMNS. */
export const FACTOR_PLACEHOLDERS = FACTOR_INSERT_COLUMNS.split(', ')
  .map(() => '?')
  .join(', ')

/**
 * The SHA-256 hex digest of a passkey's credential id: what the unique index of `mfa_factors` holds and what a passkey
 * is looked up by (a credential id of up to 1,366 characters is more than MySQL indexes).
 */
export function credentialDigest(credentialId: string): string {
  return createHash('sha256').update(credentialId, 'utf8').digest('hex')
}

/** A flag as 1 or 0: SQLite binds no boolean, and PostgreSQL reads '1' and '0' as a BOOLEAN's values. */
const flag = (value: boolean) => (value ? 1 : 0)

/** The values of the factor's row, in FACTOR_INSERT_COLUMNS order. */
export function factorValues(factor: StoredFactor): unknown[] {
  return [
    factor.id,
    factor.userId,
    factor.type,
    factor.name,
    flag(factor.confirmed),
    factor.secret,
    factor.lastStep,
    factor.credentialId,
    factor.publicKey,
    factor.counter,
    flag(factor.backedUp),
    JSON.stringify(factor.transports),
    factor.createdAt,
    factor.lastUsedAt,
    factor.credentialId === null ? null : credentialDigest(factor.credentialId),
  ]
}

/** PostgreSQL returns a BOOLEAN as a boolean, SQLite and MySQL 0 or 1. */
const isSet = (value: unknown) => value === true || Number(value) === 1

const numberOrNull = (value: unknown) => (value === null ? null : Number(value))

/** A row of FACTOR_COLUMNS as a driver returns it: PostgreSQL returns a BIGINT as a string. */
export function toFactor(row: Record<string, unknown>): StoredFactor {
  return {
    id: String(row.id),
    userId: String(row.user_id),
    type: String(row.type) as FactorType,
    name: String(row.name),
    confirmed: isSet(row.confirmed),
    secret: row.secret === null ? null : String(row.secret),
    lastStep: numberOrNull(row.last_step),
    credentialId: row.credential_id === null ? null : String(row.credential_id),
    publicKey: row.public_key === null ? null : String(row.public_key),
    counter: Number(row.counter),
    backedUp: isSet(row.backed_up),
    transports: JSON.parse(String(row.transports)) as string[],
    createdAt: Number(row.created_at),
    lastUsedAt: numberOrNull(row.last_used_at),
  }
}
