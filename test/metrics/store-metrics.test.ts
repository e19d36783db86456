import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateUserId } from '../../src/auth/user-id.js'
import { systemClock } from '../../src/clock.js'
import { loadConfig } from '../../src/config.js'
import { createStoreMetrics } from '../../src/metrics/store-metrics.js'
import { openStores } from '../../src/storage/open-stores.js'
import type { Stores } from '../../src/storage/stores.js'
import { type BackendInstance, backends } from '../support/backends.js'

const sqlite = backends.find((backend) => backend.name === 'sqlite')
if (sqlite === undefined) throw new Error('the sqlite backend is always available')

describe('createStoreMetrics', () => {
  let instance: BackendInstance
  let stores: Stores
  beforeAll(async () => {
    instance = await sqlite.setup()
    stores = await openStores(loadConfig(instance.env).storage, systemClock)
  })
  afterAll(async () => {
    await stores.close()
    await instance.teardown()
  })

  it("a metered store keeps its data members (the audit store's batchRows, which sizes the sink's batches)", async () => {
    const metered = createStoreMetrics(new Registry()).meter(stores)
    expect(metered.audit.batchRows).toBe(stores.audit.batchRows)
    expect(metered.audit.batchRows).toBe(200)
    // and its methods still reach the store
    const userId = generateUserId()
    const event = {
      at: Date.now(),
      type: 'login_succeeded',
      userId,
      clientAddress: null,
      requestId: null,
      reason: null,
    } as const
    await metered.audit.append([event])
    expect(await stores.audit.list({ userId })).toEqual([event])
  })
})
