import type { FastifyInstance } from 'fastify'
import { expect } from 'vitest'
import { DEFAULT_ADMIN_ROLE } from '../../src/config/admin-config.js'
import type { Stores } from '../../src/storage/stores.js'
import { bearer, call, type Registered, type Reply, registerUser } from '../support/http.js'
import type { TestService } from '../support/test-service.js'

export const ADMIN_ROLE = DEFAULT_ADMIN_ROLE

/** The texts of the admin API's refusals (docs/api.md §4.27), written out so that a changed text fails a test. */
export const ADMIN_MESSAGES = {
  forbidden: 'Forbidden',
  secondFactorRequired: 'Second factor required',
  userNotFound: 'User not found',
  self: 'An admin cannot demote, disable or delete their own account',
  lastAdmin: 'The last active admin cannot be demoted, disabled or deleted',
} as const

/** A request to the admin API, with `token` as its bearer when given. */
export function adminCall(
  app: FastifyInstance,
  method: string,
  url: string,
  token?: string,
  body?: unknown,
): Promise<Reply> {
  return call(app, method, url, {
    ...(token === undefined ? {} : { headers: bearer(token) }),
    ...(body === undefined ? {} : { body }),
  })
}

/** A registered account given ADMIN_ROLE in the store: its login session's token reads the admin API from then on. */
export async function newAdmin(service: TestService): Promise<Registered> {
  const user = await registerUser(service.app)
  expect(await service.stores.users.setRole(user.id, ADMIN_ROLE, new Date().toISOString())).toBe(true)
  return user
}

/**
 * A barrier for `count` calls: each waits in `pass()` until `count` have arrived, then all go on together. What holds
 * two requests that both passed the admin check at the store write they race to.
 */
export function createBarrier(count: number) {
  let waiting: { arrived: number; all: Promise<void>; release: () => void } | null = null
  return {
    /** From now on, the next `count` calls wait for each other. */
    arm() {
      let release: () => void = () => {}
      const all = new Promise<void>((resolve) => {
        release = resolve
      })
      waiting = { arrived: 0, all, release }
    },
    async pass() {
      const current = waiting
      if (current === null) return
      current.arrived++
      if (current.arrived === count) {
        waiting = null
        current.release()
      }
      await current.all
    },
  }
}

/**
 * The stores with the writes of the last-admin rule (and the count a deletion checks first) held at `barrier`, so
 * that racing requests reach the store together.
 */
export function heldAtAdminWrites(stores: Stores, barrier: { pass(): Promise<void> }): Stores {
  return {
    ...stores,
    users: {
      ...stores.users,
      setRole: async (...args) => {
        await barrier.pass()
        return stores.users.setRole(...args)
      },
      setStatus: async (...args) => {
        await barrier.pass()
        return stores.users.setStatus(...args)
      },
      countActive: async (...args) => {
        await barrier.pass()
        return stores.users.countActive(...args)
      },
    },
  }
}
