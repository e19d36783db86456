import { Counter, type Registry } from 'prom-client'

import type { SecondStepObserver } from '../mfa/mfa-service.js'

/** What the second factors report for GET /metrics (docs/api.md §6.2). */
export type MfaMetrics = SecondStepObserver

/**
 * tessera_second_factor_total{outcome}: `challenged`, a first factor answered a challenge; `passed`, a second step
 * signed in (a code, a recovery code, a passkey for a challenge); `failed`, one was refused. Failures rising against
 * passes is someone guessing codes.
 */
export function createMfaMetrics(registry: Registry): MfaMetrics {
  const counter = new Counter({
    name: 'tessera_second_factor_total',
    help: 'Second steps of sign-ins, by outcome: challenged, passed, failed',
    labelNames: ['outcome'],
    registers: [registry],
  })
  for (const outcome of ['challenged', 'passed', 'failed'] as const) counter.labels(outcome).inc(0)
  return { secondStep: (outcome) => counter.labels(outcome).inc() }
}
