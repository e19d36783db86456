import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import type { ConcurrencyLimiter, ConcurrencyObserver } from '../auth/concurrency-limiter.js'

/** The Argon2 queue's metrics: the limiter reports to `observer`, and `watch` gives the gauges its live counts. */
export interface Argon2Metrics {
  readonly observer: ConcurrencyObserver
  /** The limiter whose running and waiting computations the gauges report at each scrape. */
  watch(limiter: Pick<ConcurrencyLimiter, 'stats'>): void
}

/**
 * Upper bounds, in seconds, of the Argon2 queue wait: `0` counts the computations that found a slot free at once;
 * the rest reach up to the seconds a saturated queue holds a login.
 */
const WAIT_BUCKETS = [0, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/**
 * docs/api.md "Metrics": the Argon2 computations (AUTH_HASH_CONCURRENCY at once, AUTH_HASH_QUEUE_LIMIT waiting)
 * running and waiting now, how long each waited for its slot, and how many were refused with 503 service_busy.
 * Each computation takes milliseconds, so prom-client's own metrics cost nothing that shows.
 */
export function createArgon2Metrics(registry: Registry): Argon2Metrics {
  let stats: () => { running: number; waiting: number } = () => ({ running: 0, waiting: 0 })
  const waited = new Histogram({
    name: 'tessera_argon2_queue_wait_seconds',
    help: 'Time an Argon2 computation (a password hash or check) waited for a free slot',
    buckets: WAIT_BUCKETS,
    registers: [registry],
  })
  const refused = new Counter({
    name: 'tessera_argon2_refused_total',
    help: 'Argon2 computations refused because the queue was full (answered 503 service_busy)',
    registers: [registry],
  })
  new Gauge({
    name: 'tessera_argon2_queue_depth',
    help: 'Argon2 computations waiting for a slot now',
    registers: [registry],
    collect() {
      this.set(stats().waiting)
    },
  })
  new Gauge({
    name: 'tessera_argon2_running',
    help: 'Argon2 computations running now',
    registers: [registry],
    collect() {
      this.set(stats().running)
    },
  })
  return {
    observer: {
      started: (waitedMs) => waited.observe(waitedMs / 1000),
      refused: () => refused.inc(),
    },
    watch(limiter) {
      stats = () => limiter.stats()
    },
  }
}
