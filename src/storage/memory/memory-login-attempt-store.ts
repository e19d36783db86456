import type { BackoffPolicy, LoginAttemptStore } from '../stores.js'

interface AttemptRecord {
  count: number
  last: number
  /** The service-clock time from which the record no longer exists. */
  expiresAt: number
}

/** Records kept at most; past it the oldest go first, so a flood of new keys cannot exhaust memory. */
const MAX_RECORDS = 100_000
/** Expired records are swept after this many writes. */
const SWEEP_EVERY = 1_000

/** The wait before the attempt that follows `count` attempts, the last at `last` (0: it may go now). */
export function backoffWaitMs(count: number, last: number, now: number, policy: BackoffPolicy): number {
  if (count < policy.free) return 0
  const delay = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (count - policy.free))
  return Math.max(0, Math.ceil(last + delay - now))
}

/** Login attempts counted in this process only: what runs without Redis, and while Redis fails. */
export function createMemoryLoginAttemptStore(): LoginAttemptStore {
  const records = new Map<string, AttemptRecord>()
  let writes = 0

  const live = (key: string, now: number): AttemptRecord | undefined => {
    const record = records.get(key)
    if (record !== undefined && record.expiresAt <= now) {
      records.delete(key)
      return undefined
    }
    return record
  }
  const write = (key: string, record: AttemptRecord, now: number) => {
    records.delete(key)
    records.set(key, record)
    if (++writes % SWEEP_EVERY === 0) {
      for (const [other, { expiresAt }] of records) if (expiresAt <= now) records.delete(other)
    }
    // Map iterates in insertion order, and write() re-inserts: the first key is the least recently written
    while (records.size > MAX_RECORDS) records.delete(records.keys().next().value as string)
  }

  return {
    async take(key, now, policy) {
      const record = live(key, now) ?? { count: 0, last: now, expiresAt: now }
      const wait = backoffWaitMs(record.count, record.last, now, policy)
      if (wait > 0) return wait
      write(key, { count: record.count + 1, last: now, expiresAt: now + policy.forgetAfterMs }, now)
      return 0
    },
    async remembered(key, now) {
      return live(key, now)?.count ?? null
    },
    async count(key, now) {
      const record = live(key, now)
      if (record !== undefined) record.count++
    },
    async refund(key, now) {
      const record = live(key, now)
      if (record !== undefined && record.count > 0) record.count--
    },
    async remember(key, now, keepMs) {
      write(key, { count: 0, last: now, expiresAt: now + keepMs }, now)
    },
    async forget(key) {
      records.delete(key)
    },
  }
}
