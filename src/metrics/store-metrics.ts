import type { Registry } from 'prom-client'
import type { StorageConfig } from '../config/storage-config.js'
import { databaseEngine } from '../storage/open-stores.js'
import type { HealthProbe, Stores } from '../storage/stores.js'
import { LatencySeries, registerCollected } from './collected-metric.js'

/** The backend label of a store call. */
export type StoreBackend = 'sqlite' | 'postgres' | 'mysql' | 'redis'

/** Which backend holds each store, as openStores chooses it from DATABASE_URL and REDIS_URL. */
export interface StoreBackends {
  /** Users and the audit trail: always the SQL database. */
  database: StoreBackend
  /** Refresh tokens, rate-limit counters and login attempts: Redis when REDIS_URL is set. */
  shared: StoreBackend | null
}

export function storeBackends(storage: Pick<StorageConfig, 'databaseUrl' | 'redisUrl'>): StoreBackends {
  return { database: databaseEngine(storage.databaseUrl), shared: storage.redisUrl === null ? null : 'redis' }
}

/** The calls of one operation on one backend. */
interface OperationCalls {
  backend: StoreBackend
  operation: string
  latency: LatencySeries
  errors: number
}

/** Meters the stores' calls: latency and errors by backend and operation. */
export interface StoreMetrics {
  /**
   * The same stores, each method timed (failed calls too) and its failures counted, labelled with the backend that
   * `storage` (DATABASE_URL, REDIS_URL) puts each store on. Members it does not know pass through unmetered.
   */
  meter(stores: Stores, storage: Pick<StorageConfig, 'databaseUrl' | 'redisUrl'>): Stores
}

/**
 * docs/api.md "Metrics": every store call, by backend (sqlite, postgres, mysql, redis) and operation (the store and
 * its method, `users.findById`, as StorageError names them). A decorator applied in the composition root, so it
 * sees every backend alike (SQLite's calls too, which get no timeout of their own) and the stores stay unaware of it.
 * Every operation is listed from the start, at zero, so an alert on its errors has a series to watch.
 */
export function createStoreMetrics(registry: Registry): StoreMetrics {
  const calls: OperationCalls[] = []

  const meterMethods = <T extends object>(store: T, backend: StoreBackend, prefix: string): T => {
    const metered: Record<string, unknown> = {}
    for (const name of methodNames(store)) {
      const method = (store as Record<string, unknown>)[name] as (...args: unknown[]) => unknown
      const entry: OperationCalls = {
        backend,
        operation: `${prefix}.${name}`,
        latency: new LatencySeries(),
        errors: 0,
      }
      calls.push(entry)
      metered[name] = (...args: unknown[]) => {
        const started = performance.now()
        const result = method.apply(store, args)
        if (!(result instanceof Promise)) return result
        return result.then(
          (value: unknown) => {
            entry.latency.observe((performance.now() - started) / 1000)
            return value
          },
          (error: unknown) => {
            entry.latency.observe((performance.now() - started) / 1000)
            entry.errors++
            throw error
          },
        )
      }
    }
    return metered as T
  }

  registerCollected(registry, {
    name: 'tessera_store_call_duration_seconds',
    help: 'Time taken by a store call (failed ones too), by backend and operation',
    type: 'histogram',
    collect: () =>
      calls.flatMap(({ backend, operation, latency }) =>
        latency.values('tessera_store_call_duration_seconds', { backend, operation }),
      ),
  })
  registerCollected(registry, {
    name: 'tessera_store_call_errors_total',
    help: 'Store calls that failed (the backend did not answer in time, refused, or lost the connection), by backend and operation',
    type: 'counter',
    collect: () =>
      calls.map(({ backend, operation, errors }) => ({ labels: { backend, operation }, value: errors })),
  })

  return {
    meter(stores, storage) {
      const backends = storeBackends(storage)
      const shared = backends.shared ?? backends.database
      const probes: Record<string, HealthProbe> = {}
      for (const [name, probe] of Object.entries(stores.probes)) {
        const backend = name === 'redis' ? 'redis' : backends.database
        probes[name] = meterMethods({ ping: probe }, backend, name).ping
      }
      return {
        ...stores,
        users: meterMethods(stores.users, backends.database, 'users'),
        refreshTokens: meterMethods(stores.refreshTokens, shared, 'refreshTokens'),
        audit: meterMethods(stores.audit, backends.database, 'audit'),
        rateCounters: stores.rateCounters && meterMethods(stores.rateCounters, shared, 'rateCounters'),
        loginAttempts: stores.loginAttempts && meterMethods(stores.loginAttempts, shared, 'loginAttempts'),
        probes,
      }
    },
  }
}

/** The methods of a store: its own function members and those of its prototypes (a class), by name. */
function methodNames(store: object): string[] {
  const names = new Set<string>()
  for (
    let level = store;
    level !== Object.prototype && level !== null;
    level = Object.getPrototypeOf(level)
  ) {
    for (const name of Object.getOwnPropertyNames(level)) {
      if (name !== 'constructor' && typeof (store as Record<string, unknown>)[name] === 'function')
        names.add(name)
    }
  }
  return [...names]
}
