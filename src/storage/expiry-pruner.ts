import type { Clock } from '../clock.js'
import type { EmailCodeStore, FactorStore, RateCounterStore, TicketStore } from './stores.js'

export interface ExpiryPrunerDeps {
  /** The expired e-mail codes (migration 0005). */
  codes: Pick<EmailCodeStore, 'prune'>
  /** The ended windows of the shared counters, where they are kept in SQL (Redis and memory expire their own). */
  counters: Pick<RateCounterStore, 'prune'>
  /** The expired one-time tickets of provider sign-ins (migration 0006). */
  tickets: Pick<TicketStore, 'prune'>
  /** The TOTP factors set up and never confirmed, PENDING_FACTOR_TTL_MS after their creation (migration 0009). */
  factors: Pick<FactorStore, 'prunePending'>
  clock: Clock
  log: {
    info(fields: Record<string, unknown>, message: string): void
    warn(fields: Record<string, unknown>, message: string): void
  }
  /** How often it prunes after the first time, at start: PRUNE_EVERY_MS unless a test says otherwise. */
  everyMs?: number
}

/** Removes the rows whose time is over, in the background of a service process. */
export interface ExpiryPruner {
  /** Prunes now, in the background, and then every `everyMs`. */
  start(): void
  /** One pruning, now; resolves when it is done (joins one in progress). Never rejects: a failure is logged. */
  prune(): Promise<void>
  /** Stops the timer and waits for a pruning in progress. */
  close(): Promise<void>
}

/**
 * How often the pruner runs (docs/api.md R4.24.4): each table then holds what is alive and at most about a minute of
 * what has expired (a sign-in flood's tickets, a code flood's counters), not an hour of it. A pruning with nothing
 * expired is one read of each table's expiry index, off the request path; what has expired goes in batches of a
 * thousand rows (each store's own bound), each batch a short write.
 */
export const PRUNE_EVERY_MS = 60_000

/**
 * How long a TOTP factor set up but not confirmed is kept (docs/api.md §4.25): one hour from its creation, far more
 * than scanning the QR code and typing the first code take. It counts for nothing meanwhile; afterwards the pruner
 * removes it (within a minute: PRUNE_EVERY_MS), so that a setup abandoned leaves no sealed secret behind; until then
 * it is still there, and whoever must not confirm one so old compares its createdAt.
 */
export const PENDING_FACTOR_TTL_MS = 3_600_000

/**
 * What expires in the stores without anyone reading it again: e-mail codes, the SQL counters' windows, sign-in
 * tickets and pending second factors (PENDING_FACTOR_TTL_MS). Every process runs one, whether or not it can send mail: each delete is bounded and removes only what
 * has expired, so processes pruning at once remove each row once. A store that fails is logged and tried again at the
 * next pruning; nothing here throws into the process.
 */
export function createExpiryPruner(deps: ExpiryPrunerDeps): ExpiryPruner {
  const { clock, log } = deps
  const everyMs = deps.everyMs ?? PRUNE_EVERY_MS
  let timer: NodeJS.Timeout | null = null
  let closed = false
  let pruning: Promise<void> | null = null

  const pruneOnce = async () => {
    const now = clock.now()
    const [codes, counters, tickets, factors] = await Promise.allSettled([
      deps.codes.prune(now),
      deps.counters.prune?.(now) ?? 0,
      deps.tickets.prune(now),
      deps.factors.prunePending(now - PENDING_FACTOR_TTL_MS),
    ])
    report(codes, 'expired e-mail codes')
    report(counters, 'ended counter windows')
    report(tickets, 'expired sign-in tickets')
    report(factors, 'second factors left pending')
  }

  const report = (outcome: PromiseSettledResult<number>, what: string) => {
    if (outcome.status === 'rejected') {
      log.warn({ err: outcome.reason }, `${what} could not be pruned; tried again later`)
    } else if (outcome.value > 0) {
      log.info({ deleted: outcome.value }, `${what} pruned`)
    }
  }

  const prune = (): Promise<void> => {
    pruning ??= pruneOnce().finally(() => {
      pruning = null
    })
    return pruning
  }

  return {
    start() {
      if (timer !== null || closed) return
      void prune()
      timer = setInterval(() => void prune(), everyMs)
      // the pruner never keeps the process alive; close() ends it
      timer.unref()
    },
    prune,
    async close() {
      closed = true
      if (timer !== null) clearInterval(timer)
      timer = null
      await pruning
    },
  }
}
