import type { Redis } from 'ioredis'
import { wallClockNow } from '../../time.js'
import type { StorageAttempt, StorageCall } from '../storage-call.js'
import type { SessionStore, StoredSession } from '../stores.js'
import { legacyRefreshTokenKey, sessionsKey } from './redis-client.js'
import { createRedisScript, type RedisScript } from './redis-script.js'
import { decodeSessionRecord, encodeSessionRecord, legacySession } from './session-record.js'

/**
 * docs/api.md R7.2: every write script first reads Redis's own clock and does nothing (returns -1) past the deadline
 * it is given, the moment the service stops waiting for it. A command sent to a Redis that stops answering
 * (paused, overloaded) runs when it resumes; without the deadline it would take effect then, long after the client
 * was told it failed.
 */
const PAST_DEADLINE = `
local clock = redis.call('TIME')
local deadline = tonumber(ARGV[#ARGV])
if deadline > 0 and tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000) > deadline then return -1 end
`

/**
 * What every script that reads or writes a user's sessions does first, with KEYS[1] the user's hash, KEYS[2] the
 * user's legacy key and ARGV[1] now (the service clock's):
 * - a legacy key (a refresh token stored before sessions, `<digest>:<expiresAt>`) becomes a session of the hash,
 *   under the id session-record.ts's legacySessionId derives from its digest, so that a token stored before the
 *   upgrade refreshes once, like any session's;
 * - `sessions` gets the hash's sessions unexpired at now by id, decoded, and `expired` the ids of the others.
 * `save()`, which a script calls once it has changed the hash (and LOAD once it has converted a legacy key), sets the
 * hash's expiry at the latest of its sessions', expired ones still there included (an empty hash is gone by
 * itself): the hash outlives none of them.
 */
const LOAD = `
local now = tonumber(ARGV[1])
local legacy = redis.call('GET', KEYS[2])
if legacy then
  redis.call('DEL', KEYS[2])
  local separator = string.find(legacy, ':', 1, true)
  local expires = separator and tonumber(string.sub(legacy, separator + 1))
  if expires then
    local digest = string.sub(legacy, 1, separator - 1)
    redis.call('HSET', KEYS[1], string.sub(redis.sha1hex(digest), 1, 32), cjson.encode({
      d = digest, e = expires, c = now, u = now, v = '', a = cjson.null, p = cjson.null, r = cjson.null, f = false
    }))
  end
end
local sessions, expired, latestExpired = {}, {}, 0
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local record = cjson.decode(fields[i + 1])
  if record.e > now then
    sessions[fields[i]] = record
  else
    expired[#expired + 1] = fields[i]
    if record.e > latestExpired then latestExpired = record.e end
  end
end
-- from the records decoded above, which every script keeps in step with the hash (latestExpired is 0 once the
-- expired fields are deleted): the hash is not read and decoded a second time
local function save()
  local latest = latestExpired
  for _, record in pairs(sessions) do
    if record.e > latest then latest = record.e end
  end
  if latest > 0 then redis.call('PEXPIREAT', KEYS[1], latest) end
end
if legacy then save() end
`

/**
 * Starts a session, unless the user is retired (the account is being or has been deleted): then 0. KEYS[3] the
 * retired mark; ARGV now, id, field value, expiry, limit (a number, or `single`), deadline. With `single` the new
 * session replaces every other, the legacy key's too; with a limit n, the sessions beyond the n most recently used
 * are ended, in the SQL stores' order (sql/session-rows.ts's SESSION_ORDER: lastUsedAt, then createdAt, both latest
 * first, then id). One script, so concurrent starts for a user take turns and leave the limit.
 */
const START = createRedisScript(`${PAST_DEADLINE}
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
local id, limit = ARGV[2], tonumber(ARGV[5])
if ARGV[5] == 'single' then
  redis.call('DEL', KEYS[1], KEYS[2])
  redis.call('HSET', KEYS[1], id, ARGV[3])
  redis.call('PEXPIREAT', KEYS[1], ARGV[4])
  return 1
end
${LOAD}
-- the write that adds a session is the one that deletes the expired ones, which keeps a hash bounded; the others
-- leave them be, so that a session one caller's now has seen expire is still there for a caller whose clock is
-- behind (another instance), as it is in SQL
if #expired > 0 then redis.call('HDEL', KEYS[1], unpack(expired)) end
latestExpired = 0
redis.call('HSET', KEYS[1], id, ARGV[3])
sessions[id] = cjson.decode(ARGV[3])
local ordered = {}
for other, record in pairs(sessions) do ordered[#ordered + 1] = { other, record.u, record.c } end
if #ordered > limit then
  table.sort(ordered, function(a, b)
    if a[2] ~= b[2] then return a[2] > b[2] end
    if a[3] ~= b[3] then return a[3] > b[3] end
    return a[1] < b[1]
  end)
  for i = limit + 1, #ordered do
    redis.call('HDEL', KEYS[1], ordered[i][1])
    sessions[ordered[i][1]] = nil
  end
end
save()
return 1
`)

/**
 * The compare-and-swap of a refresh in one script, which Redis runs atomically: the session whose current digest is
 * ARGV[2] and that is unexpired at now gets the successor. ARGV now, current digest, next digest, next expiry, the
 * client address as JSON (a string or null), the absolute lifetime in milliseconds ('' for none), deadline. With a
 * lifetime, a session that started at or before now - lifetime is not rotated, and the successor expires at the
 * session's start + lifetime at the latest (SessionRotation.lifetimeMs).
 */
const ROTATE = createRedisScript(`${PAST_DEADLINE}${LOAD}
local lifetime = tonumber(ARGV[6])
for id, record in pairs(sessions) do
  if record.d == ARGV[2] then
    local expires = tonumber(ARGV[4])
    if lifetime then
      local ends = record.c + lifetime
      if ends <= now then return 0 end
      if ends < expires then expires = ends end
    end
    record.p = record.d
    record.d = ARGV[3]
    record.e = expires
    record.r = now
    record.u = now
    record.a = cjson.decode(ARGV[5])
    redis.call('HSET', KEYS[1], id, cjson.encode(record))
    save()
    return 1
  end
end
return 0
`)

/**
 * Sets the second-factor flag of the session ARGV[2]: 1 when the user had it. ARGV now, id, deadline. The session's
 * expiry is unchanged, so is the hash's (LOAD saves it after converting a legacy key).
 */
const MARK_SECOND_FACTOR = createRedisScript(`${PAST_DEADLINE}${LOAD}
local record = sessions[ARGV[2]]
if record == nil then return 0 end
record.f = true
redis.call('HSET', KEYS[1], ARGV[2], cjson.encode(record))
return 1
`)

/** Ends the session ARGV[2]: 1 when the user had it. ARGV now, id, deadline. */
const END = createRedisScript(`${PAST_DEADLINE}${LOAD}
if sessions[ARGV[2]] == nil then return 0 end
redis.call('HDEL', KEYS[1], ARGV[2])
sessions[ARGV[2]] = nil
save()
return 1
`)

/** Ends every session but ARGV[2] ('' for none); returns how many. ARGV now, except, deadline. */
const END_ALL = createRedisScript(`${PAST_DEADLINE}${LOAD}
local ended = 0
for id in pairs(sessions) do
  if id ~= ARGV[2] then
    redis.call('HDEL', KEYS[1], id)
    sessions[id] = nil
    ended = ended + 1
  end
end
save()
return ended
`)

/** END_ALL, returning the ids it ended (a list, empty when none). ARGV now, except, deadline. */
const END_ALL_RETURNING_IDS = createRedisScript(`${PAST_DEADLINE}${LOAD}
local ended = {}
for id in pairs(sessions) do
  if id ~= ARGV[2] then
    redis.call('HDEL', KEYS[1], id)
    sessions[id] = nil
    ended[#ended + 1] = id
  end
end
save()
return ended
`)

/**
 * Deletes the user's sessions (the legacy key too) and marks the user retired until ARGV[1]. KEYS the hash, the
 * legacy key, the mark; ARGV until, deadline.
 */
const RETIRE = createRedisScript(`${PAST_DEADLINE}
redis.call('SET', KEYS[3], '1', 'PXAT', ARGV[1])
redis.call('DEL', KEYS[1], KEYS[2])
return 1
`)

/** Removes the retired mark. KEYS[1] the mark; ARGV deadline. */
const REINSTATE = createRedisScript(`${PAST_DEADLINE}
redis.call('DEL', KEYS[1])
return 1
`)

/** The slice of ioredis the store uses. */
type RedisCommands = Pick<Redis, 'status' | 'evalsha' | 'eval' | 'multi' | 'time' | 'on'>

/** A measurement of Redis's clock slower than this says little about the offset, and is dropped. */
const MAX_MEASURING_ROUND_TRIP_MS = 50

/**
 * Sessions in Redis: one hash per user, `<prefix>sessions:{<user id>}`, a field per session (its id) holding the
 * rest of it (session-record.ts), the key expiring at the latest expiry of its sessions; expired fields are deleted
 * by the user's next start. For a deleted account, `<prefix>retired:{<user id>}`
 * (SessionStore.retire). The braces make the user id the hash tag, so a user's keys share one slot and the scripts
 * run on Redis Cluster. Expiry is checked against the service clock as well as by the TTL, so the store agrees with
 * the SQL stores to the millisecond. A user's `<prefix>refresh:{<user id>}`, the one refresh token an earlier
 * version kept, is read as a session by every read and converted into one by every script (LOAD).
 */
export function createRedisSessionStore(
  redis: RedisCommands,
  options: { keyPrefix: string; call: StorageCall },
): SessionStore {
  const { call, keyPrefix } = options
  /** The user's hash and legacy key: KEYS[1] and KEYS[2] of every script but REINSTATE. */
  const keys = (userId: string) => [sessionsKey(keyPrefix, userId), legacyRefreshTokenKey(keyPrefix, userId)]
  const retiredKey = (userId: string) => `${keyPrefix}retired:{${userId}}`

  /**
   * Redis's clock minus this process's wall clock, in milliseconds: what turns a call's deadline (wall-clock time,
   * src/time.ts) into one on Redis's clock, which the scripts compare with TIME. Measured now and at each
   * reconnection (another server behind the same address may keep other time), to within half a round trip; 0
   * until the first measurement.
   */
  let clockOffsetMs = 0
  const measureClockOffset = () => {
    const sent = wallClockNow()
    redis.time().then(
      ([seconds, microseconds]) => {
        const received = wallClockNow()
        if (received - sent > MAX_MEASURING_ROUND_TRIP_MS) return
        const redisNow = Number(seconds) * 1000 + Math.floor(Number(microseconds) / 1000)
        clockOffsetMs = redisNow - (sent + received) / 2
      },
      () => {},
    )
  }
  redis.on('ready', measureClockOffset)
  if (redis.status === 'ready') measureClockOffset()

  /**
   * Runs a write script with the deadline of `attempt` on Redis's clock. Nothing is sent to a client that is not
   * connected (ioredis would refuse it at once): that failure is a plain one, the write did not happen.
   */
  const write = async (
    script: RedisScript,
    scriptKeys: readonly string[],
    args: readonly (string | number)[],
    attempt: StorageAttempt,
  ): Promise<unknown> => {
    if (redis.status !== 'ready') throw new Error(`redis is not connected (${redis.status})`)
    const deadline = Number.isFinite(attempt.deadline) ? Math.floor(attempt.deadline + clockOffsetMs) : 0
    if (!attempt.commit()) throw attempt.signal.reason
    const result = await script.run(redis, scriptKeys, [...args, deadline])
    if (result === -1) throw new Error('refused by Redis: past its deadline')
    return result
  }

  /**
   * The user's unexpired sessions, in no order, the legacy key's among them as LOAD would convert it. The legacy
   * key is read first, the hash after it, in one transaction, so a conversion cannot fall between the two reads.
   */
  const sessionsOf = async (operation: string, userId: string, now: number): Promise<StoredSession[]> => {
    const [hash, legacy] = keys(userId) as [string, string]
    const replies = await call(operation, () => redis.multi().get(legacy).hgetall(hash).exec())
    if (replies === null) throw new Error('the read of the sessions was aborted')
    const [[legacyError, legacyValue], [hashError, fields]] = replies as [
      [Error | null, string | null],
      [Error | null, Record<string, string>],
    ]
    if (legacyError !== null || hashError !== null) throw legacyError ?? hashError
    const sessions = Object.entries(fields)
      .map(([id, value]) => decodeSessionRecord(userId, id, value))
      .filter((session) => session.expiresAt > now)
    const converted = legacyValue === null ? null : legacySession(userId, legacyValue, now)
    if (converted !== null && !sessions.some((session) => session.id === converted.id))
      sessions.push(converted)
    return sessions
  }

  return {
    async start(session, limit, now) {
      const args = [now, session.id, encodeSessionRecord(session), session.expiresAt, limit]
      const result = await call('sessions.start', (attempt) =>
        write(START, [...keys(session.userId), retiredKey(session.userId)], args, attempt),
      )
      return result === 1
    },
    async rotate(userId, currentDigest, next, now) {
      const args = [
        now,
        currentDigest,
        next.digest,
        next.expiresAt,
        JSON.stringify(next.clientAddress),
        next.lifetimeMs ?? '',
      ]
      const result = await call('sessions.rotate', (attempt) => write(ROTATE, keys(userId), args, attempt))
      return result === 1
    },
    async find(userId, by, now) {
      const sessions = await sessionsOf('sessions.find', userId, now)
      const found = sessions.find((session) =>
        'id' in by
          ? session.id === by.id
          : 'digest' in by
            ? session.digest === by.digest
            : session.previousDigest === by.previousDigest,
      )
      return found ?? null
    },
    async list(userId, now) {
      const sessions = await sessionsOf('sessions.list', userId, now)
      // as the SQL stores order them (SESSION_ORDER): most recently used first, then started, then by id
      return sessions.sort(
        (a, b) =>
          b.lastUsedAt - a.lastUsedAt ||
          b.createdAt - a.createdAt ||
          (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      )
    },
    async markSecondFactor(userId, sessionId, now) {
      const result = await call('sessions.markSecondFactor', (attempt) =>
        write(MARK_SECOND_FACTOR, keys(userId), [now, sessionId], attempt),
      )
      return result === 1
    },
    async end(userId, sessionId, now) {
      const result = await call('sessions.end', (attempt) =>
        write(END, keys(userId), [now, sessionId], attempt),
      )
      return result === 1
    },
    async endAll(userId, now, except) {
      const args = [now, except ?? '']
      return (await call('sessions.endAll', (attempt) =>
        write(END_ALL, keys(userId), args, attempt),
      )) as number
    },
    async endAllReturningIds(userId, now, except) {
      const args = [now, except ?? '']
      const ended = await call('sessions.endAllReturningIds', (attempt) =>
        write(END_ALL_RETURNING_IDS, keys(userId), args, attempt),
      )
      return (ended as unknown[]).map(String)
    },
    async retire(userId, until) {
      await call('sessions.retire', (attempt) =>
        write(RETIRE, [...keys(userId), retiredKey(userId)], [until], attempt),
      )
    },
    async reinstate(userId) {
      await call('sessions.reinstate', (attempt) => write(REINSTATE, [retiredKey(userId)], [], attempt))
    },
  }
}
