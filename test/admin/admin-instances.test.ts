import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Stores } from '../../src/storage/stores.js'
import { type BackendInstance, backends } from '../support/backends.js'
import { expectError, type Registered, type Reply } from '../support/http.js'
import { startTestService, type TestService } from '../support/test-service.js'
import {
  ADMIN_MESSAGES,
  ADMIN_ROLE,
  adminCall,
  createBarrier,
  heldAtAdminWrites,
  newAdmin,
} from './admin-harness.js'

// docs/api.md R4.27.7 across instances: two services on one PostgreSQL or MySQL database (each its own pool), two
// admins taking each other's role, status or account at once, one on each: one succeeds, the other is refused, and
// one active admin remains, every round.

const servers = backends.filter((backend) => backend.name === 'postgres' || backend.name === 'mysql')
const ROUNDS = 3
type Kind = 'role' | 'status' | 'delete'

describe.each(servers)('the last admin on two instances [$name]', (backend) => {
  let instance: BackendInstance
  let first: TestService
  let second: TestService
  // one barrier for both instances: the two requests of a round wait for each other at the store
  const barrier = createBarrier(2)
  const held = (stores: Stores): Stores => heldAtAdminWrites(stores, barrier)

  beforeAll(async () => {
    instance = await backend.setup()
    const options = { instance, env: { ADMIN_REQUIRE_MFA: 'false' }, wrapStores: held }
    ;[first, second] = await Promise.all([
      startTestService(backend, options),
      startTestService(backend, options),
    ])
  })
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()])
    await instance?.teardown()
  })

  /** Two admins, the only active ones: the first made on the first instance, the second on the second. */
  const twoAdmins = async (): Promise<[Registered, Registered]> => {
    for (const user of await first.stores.users.list({ limit: 1000 }))
      if (user.role === ADMIN_ROLE)
        await first.stores.users.setRole(user.id, 'user', new Date().toISOString())
    return [await newAdmin(first), await newAdmin(second)]
  }
  const takeAway = (on: TestService, kind: Kind, by: Registered, target: Registered) =>
    kind === 'delete'
      ? adminCall(on.app, 'DELETE', `/admin/users/${target.id}`, by.accessToken)
      : adminCall(
          on.app,
          'PUT',
          `/admin/users/${target.id}`,
          by.accessToken,
          kind === 'role' ? { role: 'user' } : { status: 'disabled' },
        )
  const success = (kind: Kind) => (kind === 'delete' ? 204 : 200)

  it('R4.27.7 both past the admin check, racing at the store: one succeeds, one is 409, every round', async () => {
    for (const kind of ['role', 'status', 'delete'] as const) {
      for (let round = 0; round < ROUNDS; round++) {
        const [a, b] = await twoAdmins()
        barrier.arm()
        const replies = await Promise.all([takeAway(first, kind, a, b), takeAway(second, kind, b, a)])
        const label = `${kind} ${round}: ${replies.map((reply) => reply.text).join(' | ')}`
        expect(replies.map((reply) => reply.status).sort(), label).toEqual([success(kind), 409])
        expectError(replies.find((reply) => reply.status === 409) as Reply, 409, ADMIN_MESSAGES.lastAdmin)
        expect(await first.stores.users.countActive(ADMIN_ROLE), label).toBe(1)
      }
    }
  })

  it('R4.27.7 racing freely: one succeeds, the other is refused (409, or by the admin check once the first came), one admin remains', async () => {
    for (const kind of ['role', 'status', 'delete'] as const) {
      for (let round = 0; round < ROUNDS; round++) {
        const [a, b] = await twoAdmins()
        const replies = await Promise.all([takeAway(first, kind, a, b), takeAway(second, kind, b, a)])
        const label = `${kind} ${round}: ${replies.map((reply) => reply.text).join(' | ')}`
        const statuses = replies.map((reply) => reply.status)
        expect(
          statuses.filter((status) => status === success(kind)),
          label,
        ).toHaveLength(1)
        // refused by the rule (409), or by the admin check once the other's change came first: the session ended
        // (401), or the account read disabled or demoted before its sessions were ended (403)
        expect(
          statuses.filter((status) => [401, 403, 409].includes(status)),
          label,
        ).toHaveLength(1)
        expect(await first.stores.users.countActive(ADMIN_ROLE), label).toBe(1)
      }
    }
  })
})
