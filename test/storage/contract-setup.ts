import { afterAll, beforeAll, expect } from 'vitest'
import { generateUserId } from '../../src/auth/user-id.js'
import { systemClock } from '../../src/clock.js'
import { loadConfig } from '../../src/config.js'
import { newUserRecord } from '../../src/storage/new-user.js'
import { openStores } from '../../src/storage/open-stores.js'
import type { Stores, UserRecord } from '../../src/storage/stores.js'
import type { Backend, BackendInstance } from '../support/backends.js'

/** The stores a contract suite runs against, and the fresh instance of the backend they are opened on. */
export interface OpenedStores {
  stores: Stores
  instance: BackendInstance
}

/**
 * Opens the stores on a fresh instance of `backend` before the calling suite's tests, as the service would with that
 * configuration, and closes them and removes the instance after. Every contract suite needs the same; `opened` hands
 * them to the suite once they exist.
 */
export function useContractStores(backend: Backend, opened: (storesOpened: OpenedStores) => void): void {
  let instance: BackendInstance | undefined
  let stores: Stores | undefined
  beforeAll(async () => {
    instance = await backend.setup()
    stores = await openStores(loadConfig(instance.env).storage, systemClock)
    opened({ stores, instance })
  })
  afterAll(async () => {
    await stores?.close()
    await instance?.teardown()
  })
}

/** A password hash of the form the service stores (Argon2id, PHC string); the stores never verify it. */
export const STORED_PASSWORD_HASH = '$argon2id$v=19$m=1024,t=1,p=1$c2FsdA$aGFzaA'

/**
 * How the contract suites make accounts: `newUser`, the record of one not stored yet, with `overrides`, its e-mail
 * (`emailPrefix` first) unique to the run; `created`, one that the users of `stores()` must take.
 */
export function contractAccounts(emailPrefix: string, stores: () => Stores) {
  let serial = 0
  const newUser = (overrides: Partial<UserRecord> = {}): UserRecord => ({
    ...newUserRecord({
      id: generateUserId(),
      email: `${emailPrefix}-${Date.now()}-${serial++}@example.com`,
      passwordHash: STORED_PASSWORD_HASH,
      emailVerified: false,
      createdAt: new Date().toISOString(),
    }),
    ...overrides,
  })
  const created = async (overrides: Partial<UserRecord> = {}) => {
    const user = newUser(overrides)
    expect(await stores().users.create(user)).toBe('created')
    return user
  }
  return { newUser, created }
}
