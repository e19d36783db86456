import { Counter, type Registry } from 'prom-client'

/** What the sessions report for GET /metrics (docs/api.md §6.2). */
export interface SessionMetrics {
  /** A session was ended because a rotated refresh token came back after the grace (AUTH_REFRESH_REUSE_ENDS_SESSION). */
  reuseDetected(): void
}

/**
 * tessera_refresh_reuse_detected_total: each one is a refresh token used twice outside the grace, which RFC 9700
 * reads as a stolen token (or a client that loses answers for longer than the grace): worth an alert when it rises.
 */
export function createSessionMetrics(registry: Registry): SessionMetrics {
  const detected = new Counter({
    name: 'tessera_refresh_reuse_detected_total',
    help: 'Sessions ended because a rotated refresh token was presented again after the reuse grace',
    registers: [registry],
  })
  return { reuseDetected: () => detected.inc() }
}
