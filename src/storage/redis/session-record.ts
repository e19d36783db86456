import { createHash } from 'node:crypto'
import type { StoredSession } from '../stores.js'

/**
 * A session as the field value of its user's hash (redis-session-store.ts): JSON with one-letter names, which the
 * store's Lua scripts read and write with cjson. Epoch milliseconds are JSON numbers, which cjson writes with 14
 * significant digits: exact up to the year 2286.
 */
interface SessionRecord {
  /** digest */
  d: string
  /** expiresAt */
  e: number
  /** createdAt */
  c: number
  /** lastUsedAt */
  u: number
  /** device */
  v: string
  /** clientAddress */
  a: string | null
  /** previousDigest */
  p: string | null
  /** rotatedAt */
  r: number | null
  /** secondFactor; absent from a record an earlier version wrote (false) */
  f?: boolean
}

/** The field value of `session` (its id is the field, its user the key). */
export function encodeSessionRecord(session: StoredSession): string {
  const record: SessionRecord = {
    d: session.digest,
    e: session.expiresAt,
    c: session.createdAt,
    u: session.lastUsedAt,
    v: session.device,
    a: session.clientAddress,
    p: session.previousDigest,
    r: session.rotatedAt,
    f: session.secondFactor,
  }
  return JSON.stringify(record)
}

/**
 * The session `id` of `userId` whose field value is `value`. cjson leaves a nil out: an absent name is null (or, for
 * the flag, false).
 */
export function decodeSessionRecord(userId: string, id: string, value: string): StoredSession {
  const record = JSON.parse(value) as Partial<SessionRecord>
  return {
    id,
    userId,
    digest: String(record.d),
    expiresAt: Number(record.e),
    createdAt: Number(record.c),
    lastUsedAt: Number(record.u),
    device: record.v ?? '',
    clientAddress: record.a ?? null,
    previousDigest: record.p ?? null,
    rotatedAt: record.r ?? null,
    secondFactor: record.f === true,
  }
}

/**
 * The id a legacy refresh token (legacyRefreshTokenKey) gets as a session: the first 32 hexadecimal digits of the
 * SHA-1 of its digest, what the scripts compute with redis.sha1hex. Derived, not drawn, so that every reader, and
 * the script that converts the key, name the one session alike.
 */
export function legacySessionId(digest: string): string {
  return createHash('sha1').update(digest).digest('hex').slice(0, 32)
}

/**
 * A legacy key's value, `<digest>:<expiresAt>`, as the session the scripts convert it into: a session of the
 * `single` limit, the only one its user had, started (as far as anyone can tell) `now`, on an unknown device, without
 * a second factor. Null for a value of another form, or a token expired at `now`.
 */
export function legacySession(userId: string, value: string, now: number): StoredSession | null {
  const separator = value.lastIndexOf(':')
  if (separator < 0) return null
  const digest = value.slice(0, separator)
  const expiresAt = Number(value.slice(separator + 1))
  if (!(expiresAt > now)) return null
  return {
    id: legacySessionId(digest),
    userId,
    digest,
    expiresAt,
    createdAt: now,
    lastUsedAt: now,
    device: '',
    clientAddress: null,
    previousDigest: null,
    rotatedAt: null,
    secondFactor: false,
  }
}
