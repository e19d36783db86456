import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
import { systemClock } from '../clock.js'
import { createMemoryRateCounterStore } from '../storage/memory/memory-rate-counter-store.js'
import type { RateCounterStore } from '../storage/stores.js'

type IncrCallback = Parameters<FastifyRateLimitStore['incr']>[1]

/** What the plugin passes to child(): the route's merged options, with the route itself under `routeInfo`. */
interface ChildOptions {
  routeInfo?: { method?: string | string[]; url?: string }
}

/**
 * @fastify/rate-limit's `store` option, counting in a RateCounterStore. The plugin constructs the class once and
 * asks it for a child per limited route, so that each route counts apart: the counter of a request is
 * `<METHOD>:<url>:<client key>`, in a window of the route's `timeWindow`.
 *
 * When `counters` fails, the hit is counted in `fallback` (in this process; by default on the system clock) instead: the limit still holds, per
 * process, and a failing store never lets requests through uncounted (docs/api.md R8.1).
 */
export function rateLimitStore(
  counters: RateCounterStore,
  fallback: RateCounterStore = createMemoryRateCounterStore(systemClock),
): FastifyRateLimitStoreCtor {
  class RateCounterAdapter implements FastifyRateLimitStore {
    readonly #route: string

    /** The plugin passes its options, which counting does not need; a child passes its route. */
    constructor(_options?: unknown, route = '') {
      this.#route = route
    }

    incr(key: string, callback: IncrCallback, timeWindow: number): void {
      const counter = `${this.#route}${key}`
      counters
        .increment(counter, timeWindow)
        .catch(() => fallback.increment(counter, timeWindow))
        .then(
          ({ count, resetAfterMs }) => callback(null, { current: count, ttl: resetAfterMs }),
          (error: Error) => callback(error),
        )
    }

    child(options: object): FastifyRateLimitStore {
      const { method = '', url = '' } = (options as ChildOptions).routeInfo ?? {}
      return new RateCounterAdapter(undefined, `${[method].flat().join(',')}:${url}:`)
    }
  }
  return RateCounterAdapter
}
