import type { AuditStore } from '../storage/stores.js'
import type { SecurityEvent, SecurityEventSink } from './security-event.js'

/** The slice of a logger the sink writes to (pino-compatible). */
export interface AuditLog {
  info(fields: Record<string, unknown>, message: string): void
  warn(fields: Record<string, unknown>, message: string): void
  error(fields: Record<string, unknown>, message: string): void
}

export interface AuditSinkSettings {
  /** How long an event waits for others before its batch is written. */
  flushIntervalMs: number
  /** A batch is written as soon as it has this many events; also the most rows of one INSERT. */
  maxBatch: number
  /** Events held at most, written or waiting (the store failing); further ones are dropped and counted. */
  maxPending: number
  /** While the store fails: how long before the batch is tried again. */
  retryMs: number
  /** While the store fails: at most one log line per this time. */
  failureLogEveryMs: number
  /** How often events older than the retention are pruned (also once at start). */
  pruneEveryMs: number
  /**
   * Of the events a flood makes at no cost to itself (throttled logins, refreshes with an invalid token), at most one
   * of each kind per client address per this time is kept (see keepOnePerWindow).
   */
  repeatsEveryMs: number
}

export const AUDIT_SINK_DEFAULTS: AuditSinkSettings = {
  flushIntervalMs: 100,
  maxBatch: 200,
  maxPending: 10_000,
  retryMs: 1_000,
  failureLogEveryMs: 60_000,
  pruneEveryMs: 60 * 60_000,
  repeatsEveryMs: 60_000,
}

/** The events keepOnePerWindow limits: a throttled login failure, a refresh refused for a token that does not verify. */
function isFloodable(event: SecurityEvent): boolean {
  return event.reason === 'throttled' || event.reason === 'invalid'
}

/** Addresses (of each kind) remembered for the repeat limit at most; past it, such events wait for the next window. */
const MAX_REMEMBERED_ADDRESSES = 10_000

export interface AuditSinkStats {
  /** Events appended to the store. */
  written: number
  /** Events waiting for the store (a batch being written included). */
  pending: number
  /** Events dropped because maxPending were already held, or because the store still failed at close. */
  dropped: number
  /** Throttled login failures and invalid-token refreshes left out by the per-address limit. */
  repeatsSkipped: number
}

export interface AuditSink extends SecurityEventSink {
  /** Writes every event recorded so far; resolves once they are written (or failed to be). */
  flush(): Promise<void>
  /** Prunes the events older than the retention now; resolves with how many were deleted. */
  prune(): Promise<number>
  stats(): AuditSinkStats
  /** Stops the timers, waits for a prune in progress and writes what is pending. Later events are logged only. */
  close(): Promise<void>
}

export interface AuditSinkDeps {
  /** Where the trail is kept; null keeps none (AUDIT_RETENTION_DAYS=0): events are logged only. */
  store: Pick<AuditStore, 'append' | 'prune'> | null
  log: AuditLog
  /** How long an event is kept, in milliseconds. */
  retentionMs: number
  now: () => number
  settings?: Partial<AuditSinkSettings>
}

/**
 * The account service's SecurityEventSink (docs/api.md "Audit events"): each event is logged at once and appended to
 * the audit trail in batches, off the request path. record() returns at once, whatever the store does: a login never
 * waits for the trail, and a store that fails costs no request its answer. The events wait in memory for at most
 * flushIntervalMs, or until maxBatch of them make a batch, and each batch is one multi-row INSERT; one batch is
 * written at a time. What a crash can lose: the events not yet written, at most one interval's (the log has them).
 *
 * login_failed is not logged here: the account service logs the two kinds that check a password at warn itself
 * (docs/api.md R4.4.4), and the throttled kind, refused before any check, would let a guessing flood flood the log.
 */
export function createAuditSink(deps: AuditSinkDeps): AuditSink {
  const { store, log, now } = deps
  const settings = { ...AUDIT_SINK_DEFAULTS, ...deps.settings }
  let pending: SecurityEvent[] = []
  let inFlight: Promise<void> | null = null
  let inFlightCount = 0
  let timer: NodeJS.Timeout | null = null
  let closed = false
  const stats = { written: 0, dropped: 0, repeatsSkipped: 0 }
  /** Set while the store fails: when the failure began and when it was last logged. */
  let failing: { since: number; loggedAt: number } | null = null
  /** Events dropped since the store last took a batch. */
  let droppedSinceWrite = 0
  let seenThisWindow = new Set<string>()
  let pruning: Promise<number> | null = null

  const arm = (delayMs: number) => {
    if (timer !== null || closed) return
    timer = setTimeout(() => {
      timer = null
      void writeBatch()
    }, delayMs)
    // the trail never keeps the process alive; close() writes what is left
    timer.unref()
  }

  /** Writes the next batch, or joins the one being written. Never rejects. */
  const writeBatch = (): Promise<void> => {
    if (inFlight !== null) return inFlight
    if (pending.length === 0 || store === null) return Promise.resolve()
    const batch = pending.slice(0, settings.maxBatch)
    pending = pending.slice(batch.length)
    inFlightCount = batch.length
    inFlight = store
      .append(batch)
      .then(
        () => {
          stats.written += batch.length
          const dropped = droppedSinceWrite
          droppedSinceWrite = 0
          if (failing === null) return
          log.info(
            { dropped, failedForMs: now() - failing.since },
            'the audit store answers again: the pending audit events are written',
          )
          failing = null
        },
        (error: unknown) => {
          // the batch goes back in front: it is tried again, and the oldest events are the ones kept
          pending = batch.concat(pending)
          const at = now()
          if (failing !== null && at - failing.loggedAt < settings.failureLogEveryMs) return
          log.error(
            { err: error, pending: pending.length, dropped: stats.dropped },
            'audit events could not be written: kept in memory and tried again',
          )
          failing = {
            since: failing?.since ?? at,
            loggedAt: at,
          }
        },
      )
      .finally(() => {
        inFlight = null
        inFlightCount = 0
        if (pending.length === 0) return
        if (failing !== null) arm(settings.retryMs)
        else if (pending.length >= settings.maxBatch) void writeBatch()
        else arm(settings.flushIntervalMs)
      })
    return inFlight
  }

  const prune = (): Promise<number> => {
    if (store === null) return Promise.resolve(0)
    pruning ??= store
      .prune(now() - deps.retentionMs)
      .then(
        (deleted) => {
          if (deleted > 0) log.info({ deleted }, 'old audit events pruned')
          return deleted
        },
        (error: unknown) => {
          log.warn({ err: error }, 'old audit events could not be pruned; tried again in an hour')
          return 0
        },
      )
      .finally(() => {
        pruning = null
      })
    return pruning
  }

  let pruneTimer: NodeJS.Timeout | null = null
  let windowTimer: NodeJS.Timeout | null = null
  if (store !== null) {
    void prune()
    pruneTimer = setInterval(() => void prune(), settings.pruneEveryMs)
    pruneTimer.unref()
    windowTimer = setInterval(() => {
      seenThisWindow = new Set()
    }, settings.repeatsEveryMs)
    windowTimer.unref()
  }

  /**
   * A guessing flood is refused by the throttle at no cost to it, and a refresh with a token that does not verify
   * costs the sender nothing either: one event per attempt would let a flood fill the disk. So of each of those two
   * kinds, one event per client address per repeatsEveryMs is kept.
   */
  const keepOnePerWindow = (event: SecurityEvent): boolean => {
    const key = `${event.reason} ${event.clientAddress ?? ''}`
    if (seenThisWindow.has(key) || seenThisWindow.size >= MAX_REMEMBERED_ADDRESSES) {
      stats.repeatsSkipped++
      return false
    }
    seenThisWindow.add(key)
    return true
  }

  return {
    record(event) {
      if (event.type !== 'login_failed') {
        log.info(
          {
            event: event.type,
            userId: event.userId,
            clientAddress: event.clientAddress,
            reqId: event.requestId,
            ...(event.reason === null ? {} : { reason: event.reason }),
          },
          'security event',
        )
      }
      if (store === null || closed) return
      if (isFloodable(event) && !keepOnePerWindow(event)) return
      if (pending.length + inFlightCount >= settings.maxPending) {
        stats.dropped++
        droppedSinceWrite++
        return
      }
      pending.push(event)
      if (inFlight !== null || failing !== null) return
      if (pending.length >= settings.maxBatch) {
        if (timer !== null) clearTimeout(timer)
        timer = null
        void writeBatch()
      } else arm(settings.flushIntervalMs)
    },

    async flush() {
      while (inFlight !== null || pending.length > 0) {
        if (timer !== null) clearTimeout(timer)
        timer = null
        const before = stats.written
        await writeBatch()
        // the store fails: what is left stays pending for the retry
        if (stats.written === before && inFlight === null) return
      }
    },

    prune,

    stats: () => ({ ...stats, pending: pending.length + inFlightCount }),

    async close() {
      if (closed) return
      await this.flush()
      closed = true
      if (timer !== null) clearTimeout(timer)
      if (pruneTimer !== null) clearInterval(pruneTimer)
      if (windowTimer !== null) clearInterval(windowTimer)
      await pruning
      if (pending.length > 0) {
        stats.dropped += pending.length
        log.error({ lost: pending.length }, 'audit events lost at shutdown: the store did not take them')
        pending = []
      }
    },
  }
}
