import { Counter, type Registry } from 'prom-client'
import type { SignInOutcome } from '../providers/sign-in-flow.js'

/** What the provider sign-ins report for GET /metrics (docs/api.md §6.2). */
export interface ProviderMetrics {
  /**
   * A provider sign-in came back to the callback (of a configured provider) and ended this way: signed in to an
   * account linked before, linked by its address, created, or a failure by its name (sign-in-failure.ts).
   */
  signIn(provider: string, outcome: SignInOutcome): void
}

/**
 * tessera_provider_sign_ins_total by provider and outcome. The provider label only ever names a configured provider
 * (a callback for any other name is not counted), so a client cannot grow the label set. A rise of `state_invalid`
 * or `email_unverified` is worth a look: replayed callbacks, or provider accounts that claim addresses of accounts
 * here.
 */
export function createProviderMetrics(registry: Registry): ProviderMetrics {
  const signIns = new Counter({
    name: 'tessera_provider_sign_ins_total',
    help: 'Provider sign-ins that came back to the callback, by provider and outcome',
    labelNames: ['provider', 'outcome'],
    registers: [registry],
  })
  return { signIn: (provider, outcome) => signIns.labels(provider, outcome).inc() }
}
