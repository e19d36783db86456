import { createHash } from 'node:crypto'
import type { RateCount } from '../stores.js'
import type { SqlResult } from './sql-database.js'

/** The width of rate_counters.counter_key, in characters (migration 0005). */
const KEY_WIDTH = 300

/**
 * The counter_key of `key`: the key itself, or, past the column's width, its SHA-256 (a distinct prefix keeps it
 * apart from any key of that form), so that no key fails the statement.
 */
export function storedCounterKey(key: string): string {
  // a string's length counts UTF-16 code units, never fewer than the characters the column counts
  if (key.length <= KEY_WIDTH) return key
  return `sha256:${createHash('sha256').update(key).digest('hex')}`
}

/**
 * MySQL's increment, which has no RETURNING, reports the count and the milliseconds left in its window packed into
 * one integer, the statement's LAST_INSERT_ID(expr): the milliseconds times 2^32, plus the count (which an INT
 * column keeps under 2^31). Windows shorter than 2^31 ms (24 days) keep the packed value under 2^63.
 */
export const PACKED_COUNT_FACTOR = 4_294_967_296

/** The longest window an increment accepts: what the packing of MySQL leaves room for. */
export const MAX_WINDOW_MS = 2 ** 31 - 1

/**
 * The count an increment statement reports at `now`: the row its RETURNING gives (hits, window_ends), or MySQL's
 * packed LAST_INSERT_ID.
 */
export function toRateCount(result: SqlResult, now: number, windowMs: number): RateCount {
  const [row] = result.rows
  // at most one window: `now` is read before the statement runs, so a hit that ran just after a concurrent one with
  // a later `now` had opened the window would otherwise see more than a window left
  const left = (ms: number) => Math.min(ms, windowMs)
  if (row !== undefined) return { count: Number(row.hits), resetAfterMs: left(Number(row.window_ends) - now) }
  if (result.lastInsertId === undefined) throw new Error('the increment reported no count')
  const factor = BigInt(PACKED_COUNT_FACTOR)
  return {
    count: Number(result.lastInsertId % factor),
    resetAfterMs: left(Number(result.lastInsertId / factor)),
  }
}
