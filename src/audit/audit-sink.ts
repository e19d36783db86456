import type { Clock } from '../clock.js'
import type { SecurityEvent, SecurityEventReason, SecurityEventSink } from '../security-event.js'
import type { AuditStore } from '../storage/stores.js'

/** The slice of a logger the sink writes to (pino-compatible). */
export interface AuditLog {
  info(fields: Record<string, unknown>, message: string): void
  warn(fields: Record<string, unknown>, message: string): void
  error(fields: Record<string, unknown>, message: string): void
}

export interface AuditSinkSettings {
  /** How long an event waits for others before its batch is written. */
  flushIntervalMs: number
  /**
   * A batch is written as soon as it has this many events; also the most rows of one INSERT. By default the store's
   * own (AuditStore.batchRows).
   */
  maxBatch: number
  /** Events held at most, written or waiting (the store failing); further ones are dropped and counted. */
  maxPending: number
  /** While the store fails: how long before the batch is tried again. */
  retryMs: number
  /** While the store fails: at most one log line per this time. */
  failureLogEveryMs: number
  /** How often events older than the retention are pruned (also once when the sink is started). */
  pruneEveryMs: number
  /** The window of the flood bound (see createFloodBound): a minute, aligned on the clock's minutes. */
  floodWindowMs: number
  /** Of each kind of event a client can cause at will, at most this many per window are kept as rows of their own. */
  floodRowsPerWindow: number
}

/** The defaults; maxBatch's is the store's (AuditStore.batchRows). */
export const AUDIT_SINK_DEFAULTS: Omit<AuditSinkSettings, 'maxBatch'> = {
  flushIntervalMs: 100,
  maxPending: 10_000,
  retryMs: 1_000,
  failureLogEveryMs: 60_000,
  pruneEveryMs: 60 * 60_000,
  floodWindowMs: 60_000,
  floodRowsPerWindow: 100,
}

export interface AuditSinkStats {
  /** Events appended to the store. */
  written: number
  /** Events waiting for the store (a batch being written included). */
  pending: number
  /** Events dropped because maxPending were already held, or because the store still failed at close. */
  dropped: number
  /** Events a client can cause at will that the flood bound left out (each counted in an events_omitted row). */
  floodOmitted: number
}

export interface AuditSink extends SecurityEventSink {
  /** Writes every event recorded so far; resolves once they are written (or failed to be). */
  flush(): Promise<void>
  /** Prunes the events older than the retention now; resolves with how many were deleted. */
  prune(): Promise<number>
  /**
   * Starts the retention (R6.3.5): prunes once now, then every pruneEveryMs. Work that can wait until the port is
   * open (Service.start): when the sink started it as it was made, the first prune's DELETE started the SQLite writer
   * thread in the middle of every start. Once only; not once close() has begun.
   */
  start(): void
  stats(): AuditSinkStats
  /** Stops the timers, waits for a prune in progress and writes what is pending. Later events are logged only. */
  close(): Promise<void>
}

export interface AuditSinkDeps {
  /** Where the trail is kept; null keeps none (AUDIT_RETENTION_DAYS=0): events are logged only. */
  store: Pick<AuditStore, 'append' | 'prune' | 'batchRows'> | null
  log: AuditLog
  /** How long an event is kept, in milliseconds. */
  retentionMs: number
  /** The service clock: when a failure began, what is old enough to prune, and the flood bound's windows. */
  clock: Clock
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
  const { store, log, clock } = deps
  // without a store no batch is ever made
  const settings: AuditSinkSettings = {
    ...AUDIT_SINK_DEFAULTS,
    maxBatch: store?.batchRows ?? Number.POSITIVE_INFINITY,
    ...deps.settings,
  }
  let pending: SecurityEvent[] = []
  let inFlight: Promise<void> | null = null
  let inFlightCount = 0
  let timer: NodeJS.Timeout | null = null
  let closed = false
  const stats = { written: 0, dropped: 0, floodOmitted: 0 }
  /** Set while the store fails: when the failure began and when it was last logged. */
  let failing: { since: number; loggedAt: number } | null = null
  /** Events dropped since the store last took a batch. */
  let droppedSinceWrite = 0
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
            { dropped, failedForMs: clock.now() - failing.since },
            'the audit store answers again: the pending audit events are written',
          )
          failing = null
        },
        (error: unknown) => {
          // the batch goes back in front: it is tried again, and the oldest events are the ones kept
          pending = batch.concat(pending)
          const at = clock.now()
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
      .prune(clock.now() - deps.retentionMs)
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

  /** Queues an event for the next batch (or drops it, counted, when maxPending are held). */
  const enqueue = (event: SecurityEvent) => {
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
  }

  const floods = createFloodBound({
    windowMs: settings.floodWindowMs,
    rowsPerWindow: settings.floodRowsPerWindow,
    clock,
    summarize: (summary) => {
      log.info(
        { event: summary.type, reason: summary.reason, omitted: summary.omitted, minuteStart: summary.at },
        'security events left out of the audit trail by its flood bound',
      )
      enqueue(summary)
    },
  })

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
      if (!floods.keep(event)) {
        stats.floodOmitted++
        return
      }
      enqueue(event)
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

    start() {
      if (store === null || closed || pruneTimer !== null) return
      void prune()
      pruneTimer = setInterval(() => void prune(), settings.pruneEveryMs)
      pruneTimer.unref()
    },

    stats: () => ({ ...stats, pending: pending.length + inFlightCount }),

    async close() {
      if (closed) return
      // the minute in progress is summed up now: its omitted events are counted in the trail too
      floods.close()
      await this.flush()
      closed = true
      if (timer !== null) clearTimeout(timer)
      if (pruneTimer !== null) clearInterval(pruneTimer)
      await pruning
      if (pending.length > 0) {
        stats.dropped += pending.length
        log.error({ lost: pending.length }, 'audit events lost at shutdown: the store did not take them')
        pending = []
      }
    },
  }
}

/**
 * The kinds of event a client can cause at will, as often as it likes, by their reason: a login with an e-mail no
 * account has, a login the throttle refuses, a refresh token that does not verify, a replayed token whose reuse
 * was recorded already, and a code of a public purpose sent, tried or mailed. None names an account it proves anything
 * about.
 */
const FLOOD_KINDS: ReadonlySet<SecurityEventReason> = new Set<SecurityEventReason>([
  'unknown_email',
  'throttled',
  'invalid',
  'replayed',
  // codes and their mail for any address at all (docs/api.md §4.14): named by purpose, they name no account
  'register',
  'login',
  'reset_password',
])

interface FloodBoundOptions {
  windowMs: number
  rowsPerWindow: number
  clock: Clock
  /** Given the events_omitted summary of each kind that left events out, once its window is over. */
  summarize: (summary: SecurityEvent) => void
}

/** Per kind, in the current window: the client addresses kept, and how many events were left out. */
interface KindWindow {
  addresses: Set<string>
  omitted: number
}

/**
 * docs/api.md R6.3.4: the audit trail cannot be grown at will. Of each flood kind, in each window of the clock (a
 * minute: window n runs from n·windowMs), the first event of each client address is kept, up to rowsPerWindow
 * events in all, whatever the number of addresses; the rest are left out, and once the window is over one
 * `events_omitted` event per kind says how many (`omitted`, at the window's start, no user and no address). So a flood
 * from any number of addresses costs the trail at most rowsPerWindow + 1 rows per kind and minute, per process; every
 * other event is kept. The metrics and the log still see every event (the sink's caller counts and logs them).
 */
function createFloodBound(options: FloodBoundOptions) {
  const { windowMs, rowsPerWindow, clock, summarize } = options
  let window = Math.floor(clock.now() / windowMs)
  let kinds = new Map<SecurityEventReason, KindWindow>()
  let timer: NodeJS.Timeout | null = null

  /** Hands over the summaries of the window that ended, and starts `next`. */
  const endWindow = (next: number) => {
    if (timer !== null) clearTimeout(timer)
    timer = null
    for (const [reason, kind] of kinds) {
      if (kind.omitted === 0) continue
      summarize({
        at: window * windowMs,
        type: 'events_omitted',
        userId: null,
        clientAddress: null,
        requestId: null,
        reason,
        omitted: kind.omitted,
      })
    }
    kinds = new Map()
    window = next
  }

  /** Once a window has left something out, its summary is written when it ends, even if no event comes after it. */
  const armSummary = () => {
    if (timer !== null) return
    timer = setTimeout(
      () => {
        timer = null
        const current = Math.floor(clock.now() / windowMs)
        if (current > window) endWindow(current)
        else armSummary()
      },
      Math.max(1, (window + 1) * windowMs - clock.now()),
    )
    timer.unref()
  }

  return {
    /** Whether `event` is kept; an event of no flood kind always is. */
    keep(event: SecurityEvent): boolean {
      if (event.reason === null || !FLOOD_KINDS.has(event.reason)) return true
      const eventWindow = Math.floor(event.at / windowMs)
      if (eventWindow > window) endWindow(eventWindow)
      let kind = kinds.get(event.reason)
      if (kind === undefined) {
        kind = { addresses: new Set(), omitted: 0 }
        kinds.set(event.reason, kind)
      }
      const address = event.clientAddress ?? ''
      if (kind.addresses.size < rowsPerWindow && !kind.addresses.has(address)) {
        kind.addresses.add(address)
        return true
      }
      kind.omitted++
      armSummary()
      return false
    },
    /** Hands over the summaries of the window in progress (at shutdown) and stops the timer. */
    close() {
      endWindow(window)
    },
  }
}
