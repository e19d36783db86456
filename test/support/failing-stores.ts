import { StorageError } from '../../src/errors.js'
import type { Stores } from '../../src/storage/stores.js'

/** The stores, with every user and refresh-token call failing like a lost connection while `failing()` is true. */
export function withInjectedFailures(stores: Stores, failing: () => boolean): Stores {
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(object, key) {
        const value = Reflect.get(object, key)
        if (typeof value !== 'function') return value
        return async (...args: unknown[]) => {
          if (failing()) {
            throw new StorageError(`${String(key)} failed`, {
              cause: new Error('ECONNREFUSED secret-host:5432'),
            })
          }
          return value.apply(object, args)
        }
      },
    })
  return { ...stores, users: wrap(stores.users), refreshTokens: wrap(stores.refreshTokens) }
}
