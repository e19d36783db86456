import type { StoredSession } from '../stores.js'

/** The columns of `sessions` (migrations 0004, 0010) that hold a StoredSession, in the order of every SELECT. */
export const SESSION_COLUMNS =
  'id, user_id, token_digest, expires_at, created_at, last_used_at, device, client_address, previous_digest, rotated_at, second_factor'

/**
 * Most recently used first: the latest last_used_at, then the latest start (a session started in the millisecond
 * another was used is the more recent), then the id, so that every store and every statement orders alike.
 */
export const SESSION_ORDER = 'last_used_at DESC, created_at DESC, id'

/** The slot of a session started with the `single` limit (the others' slot is their id): migration 0004. */
export const SINGLE_SLOT = 'single'

/**
 * A row of SESSION_COLUMNS as a driver returns it: PostgreSQL returns a BIGINT as a string, and the flag as a
 * boolean, the others as 0 or 1.
 */
export function toSession(row: Record<string, unknown>): StoredSession {
  return {
    id: String(row.id),
    userId: String(row.user_id),
    digest: String(row.token_digest),
    expiresAt: Number(row.expires_at),
    createdAt: Number(row.created_at),
    lastUsedAt: Number(row.last_used_at),
    device: String(row.device),
    clientAddress: row.client_address === null ? null : String(row.client_address),
    previousDigest: row.previous_digest === null ? null : String(row.previous_digest),
    rotatedAt: row.rotated_at === null ? null : Number(row.rotated_at),
    secondFactor: row.second_factor === true || Number(row.second_factor) === 1,
  }
}

/** The columns an INSERT of a session names, in the order of sessionValues. */
export const SESSION_INSERT_COLUMNS =
  'id, user_id, slot, token_digest, expires_at, created_at, last_used_at, device, client_address, previous_digest, rotated_at, second_factor'

/**
 * The values of a session's row in slot `slot`, in SESSION_INSERT_COLUMNS order; the flag 1 or 0, which every engine
 * takes (SQLite has no boolean, MySQL's BOOLEAN is a TINYINT, and PostgreSQL reads '1' and '0' as booleans).
 */
export function sessionValues(session: StoredSession, slot: string): unknown[] {
  return [
    session.id,
    session.userId,
    slot,
    session.digest,
    session.expiresAt,
    session.createdAt,
    session.lastUsedAt,
    session.device,
    session.clientAddress,
    session.previousDigest,
    session.rotatedAt,
    session.secondFactor ? 1 : 0,
  ]
}

/**
 * What an upsert of a session sets in the row that holds its slot, in the SQL of SQLite and PostgreSQL (which name
 * the proposed row `excluded`): every column but the slot's own two.
 */
export const SESSION_UPSERT_SET = SESSION_INSERT_COLUMNS.split(', ')
  .filter((column) => column !== 'user_id' && column !== 'slot')
  .map((column) => `${column} = excluded.${column}`)
  .join(', ')
