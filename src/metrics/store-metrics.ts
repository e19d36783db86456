import type { Registry } from 'prom-client'
import type { HealthProbe, StoreEngine, Stores } from '../storage/stores.js'
import { monotonicNow } from '../time.js'
import { LatencySeries, registerCollected } from './collected-metric.js'

/** The calls of one operation on one backend. */
interface OperationCalls {
  backend: StoreEngine
  operation: string
  latency: LatencySeries
  errors: number
}

/** Meters the stores' calls: latency and errors by backend and operation. */
export interface StoreMetrics {
  /**
   * The same stores, each method timed (failed calls too) and its failures counted, labelled with the backend that
   * holds each store (Stores.placement, as openStores chose it). Members it does not know pass through unmetered.
   */
  meter(stores: Stores): Stores
}

/**
 * docs/api.md "Metrics": every store call, by backend (sqlite, postgres, mysql, redis) and operation (the store and
 * its method, `users.findById`, as StorageError names them). A decorator applied in the composition root, so it
 * sees every backend alike (SQLite's calls too, which get no timeout of their own) and the stores stay unaware of it.
 * Every operation is listed from the start, at zero, so an alert on its errors has a series to watch.
 */
export function createStoreMetrics(registry: Registry): StoreMetrics {
  const calls: OperationCalls[] = []

  const meterMethods = <T extends object>(store: T, backend: StoreEngine, prefix: string): T => {
    // a store's data members (AuditStore.batchRows) pass through as they are; its methods are metered
    const metered: Record<string, unknown> = { ...(store as Record<string, unknown>) }
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
        const started = monotonicNow()
        const result = method.apply(store, args)
        if (!(result instanceof Promise)) return result
        return result.then(
          (value: unknown) => {
            entry.latency.observe((monotonicNow() - started) / 1000)
            return value
          },
          (error: unknown) => {
            entry.latency.observe((monotonicNow() - started) / 1000)
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
    meter(stores) {
      const { placement } = stores
      const probes: Record<string, HealthProbe> = {}
      for (const [name, probe] of Object.entries(stores.probes)) {
        const backend = placement.probes[name]
        probes[name] = backend === undefined ? probe : meterMethods({ ping: probe }, backend, name).ping
      }
      const { rateCounters, loginAttempts } = placement
      return {
        ...stores,
        users: meterMethods(stores.users, placement.users, 'users'),
        sessions: meterMethods(stores.sessions, placement.sessions, 'sessions'),
        audit: meterMethods(stores.audit, placement.audit, 'audit'),
        codes: meterMethods(stores.codes, placement.mail, 'codes'),
        outbox: meterMethods(stores.outbox, placement.mail, 'outbox'),
        webhookUrls: meterMethods(stores.webhookUrls, placement.mail, 'webhookUrls'),
        // in the accounts' database, whatever REDIS_URL says (StorePlacement.users)
        avatars: meterMethods(stores.avatars, placement.users, 'avatars'),
        providerLinks: meterMethods(stores.providerLinks, placement.users, 'providerLinks'),
        tickets: meterMethods(stores.tickets, placement.users, 'tickets'),
        factors: meterMethods(stores.factors, placement.users, 'factors'),
        serviceKeys: meterMethods(stores.serviceKeys, placement.users, 'serviceKeys'),
        sharedCounters: meterMethods(stores.sharedCounters, placement.sharedCounters, 'sharedCounters'),
        rateCounters:
          stores.rateCounters && rateCounters !== null
            ? meterMethods(stores.rateCounters, rateCounters, 'rateCounters')
            : stores.rateCounters,
        loginAttempts:
          stores.loginAttempts && loginAttempts !== null
            ? meterMethods(stores.loginAttempts, loginAttempts, 'loginAttempts')
            : stores.loginAttempts,
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
