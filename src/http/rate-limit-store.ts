import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit'
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
 */
export function rateLimitStore(counters: RateCounterStore): FastifyRateLimitStoreCtor {
  class RateCounterAdapter implements FastifyRateLimitStore {
    readonly #route: string

    /** The plugin passes its options, which counting does not need; a child passes its route. */
    constructor(_options?: unknown, route = '') {
      this.#route = route
    }

    incr(key: string, callback: IncrCallback, timeWindow: number): void {
      counters.increment(`${this.#route}${key}`, timeWindow).then(
        ({ count, resetAfterMs }) => callback(null, { current: count, ttl: resetAfterMs }),
        // the plugin's skipOnError decides what a failing counter means for the request
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
