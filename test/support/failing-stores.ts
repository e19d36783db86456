import { StorageError } from '../../src/errors.js'
import type { Stores } from '../../src/storage/stores.js'

/** The stores a failure can be injected into. */
type FailingStore =
  | 'users'
  | 'sessions'
  | 'codes'
  | 'outbox'
  | 'sharedCounters'
  | 'avatars'
  | 'providerLinks'
  | 'tickets'
  | 'factors'
  | 'serviceKeys'
  | 'webhookUrls'

/**
 * The stores, with every call of the stores named in `stores` (the users and sessions by default) failing like a
 * lost connection while `failing()` is true. `writes` narrows the failure to the methods named there (`create`,
 * `start`, `rotate`, `end`…), and `outcomeUnknown` makes it a write whose outcome is unknown (sent, no answer:
 * docs/api.md R7.3) instead of one that was not made.
 */
export function withInjectedFailures(
  stores: Stores,
  failing: () => boolean,
  options: { writes?: readonly string[]; outcomeUnknown?: boolean; stores?: readonly FailingStore[] } = {},
): Stores {
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(object, key) {
        const value = Reflect.get(object, key)
        if (typeof value !== 'function') return value
        if (options.writes && !options.writes.includes(String(key))) return value.bind(object)
        return async (...args: unknown[]) => {
          if (failing()) {
            throw new StorageError(`${String(key)} failed`, {
              cause: new Error('ECONNREFUSED secret-host:5432'),
              outcomeUnknown: options.outcomeUnknown ?? false,
            })
          }
          return value.apply(object, args)
        }
      },
    })
  const wrapped: Stores = { ...stores }
  for (const name of options.stores ?? ['users', 'sessions']) {
    // each store keeps its own type; the record view only lets one loop wrap them all
    ;(wrapped as unknown as Record<FailingStore, object>)[name] = wrap(stores[name])
  }
  return wrapped
}
