import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateUserId } from '../../src/auth/user-id.js'
import type { SecurityEvent } from '../../src/security-event.js'
import { newUserRecord } from '../../src/storage/new-user.js'
import { STORED_PASSWORD_HASH } from '../storage/contract-setup.js'
import { backends } from '../support/backends.js'
import { expectError, type Registered } from '../support/http.js'
import { startTestService, type TestService } from '../support/test-service.js'
import { adminCall, newAdmin } from './admin-harness.js'

const ACCOUNTS = 1_000

/**
 * docs/api.md R4.27.1, R4.27.4 and R4.27.9 on every backend: keyset pages over 1,000 accounts (made through the store,
 * not by 1,000 Argon2 registrations), the prefix search in any case, and the audit trail's pages and filters.
 */
describe.each(backends)('admin pages [$name]', (backend) => {
  let service: TestService
  let admin: Registered
  const tag = `pg${Date.now().toString(36)}`
  /** Every account's id: the 1,000 and the admin. */
  const everyId: string[] = []
  beforeAll(async () => {
    service = await startTestService(backend, { env: { ADMIN_REQUIRE_MFA: 'false' } })
    admin = await newAdmin(service)
    everyId.push(admin.id)
    const createdAt = new Date().toISOString()
    // 50 creations at a time: each one INSERT, the engine's own concurrency
    for (let start = 0; start < ACCOUNTS; start += 50) {
      await Promise.all(
        Array.from({ length: 50 }, async (_, i) => {
          const n = start + i
          const id = generateUserId()
          const result = await service.stores.users.create(
            newUserRecord({
              id,
              email: `${tag}-${n}@example.com`,
              passwordHash: STORED_PASSWORD_HASH,
              emailVerified: false,
              createdAt,
            }),
          )
          expect(result).toBe('created')
          everyId.push(id)
          // every tenth has a username: `<tag>u<n>`
          if (n % 10 === 0) {
            const named = await service.stores.users.updateProfile(
              id,
              { username: `${tag}u${n}`, nickname: null, bio: null },
              createdAt,
            )
            expect(named).toBe('updated')
          }
        }),
      )
    }
    everyId.sort()
  }, 120_000)
  afterAll(() => service?.close())

  /** Every page of GET /admin/users with `query` and `limit`, following `next`: the ids of each page. */
  const pages = async (query: Record<string, string>) => {
    const found: string[][] = []
    let after: string | null = null
    for (;;) {
      const search = new URLSearchParams({ ...query, ...(after === null ? {} : { after }) })
      const reply = await adminCall(service.app, 'GET', `/admin/users?${search}`, admin.accessToken)
      expect(reply.status, reply.text).toBe(200)
      found.push(reply.body.data.users.map((user: { id: string }) => user.id))
      after = reply.body.data.next
      if (after === null) return found
    }
  }

  it('R4.27.4 keyset pages over 1,000 accounts: each once, in id order, none skipped', async () => {
    const found = await pages({ limit: '100' })
    expect(found.map((page) => page.length)).toEqual([...Array(10).fill(100), 1])
    expect(found.flat()).toEqual(everyId)
    // the default page is 50
    const first = await adminCall(service.app, 'GET', '/admin/users', admin.accessToken)
    expect(first.body.data.users.map((user: { id: string }) => user.id)).toEqual(everyId.slice(0, 50))
    expect(first.body.data.next).toEqual(expect.any(String))
  })

  it('R4.27.4 the prefix search, of the e-mail or the username, in any case, in pages', async () => {
    const emails = (await pages({ query: `${tag.toUpperCase()}-1`, limit: '50' })).flat()
    // -1, -10 to -19, -100 to -199
    expect(emails).toHaveLength(111)
    const byEmail = await Promise.all(emails.map((id) => service.stores.users.findById(id)))
    for (const user of byEmail) expect(user?.email.startsWith(`${tag}-1`)).toBe(true)
    expect(emails).toEqual([...emails].sort())
    const usernames = (await pages({ query: ` ${tag}U`, limit: '100' })).flat()
    expect(usernames).toHaveLength(100)
    expect((await pages({ query: `${tag}u99` })).flat()).toHaveLength(1)
    expect((await pages({ query: 'nobody-has-this' })).flat()).toEqual([])
    expect((await pages({ query: '%' })).flat()).toEqual([])
  })

  it('R4.27.1 the query parameters are checked: 400 naming the parameter', async () => {
    const refused = async (path: string, field: string, problem: string) => {
      const reply = await adminCall(service.app, 'GET', path, admin.accessToken)
      expect(reply.status, reply.text).toBe(400)
      expect(reply.body.data.errors).toEqual([{ field, message: problem }])
    }
    await refused('/admin/users?limit=0', '/limit', 'must be a whole number from 1 to 100')
    await refused('/admin/users?limit=101', '/limit', 'must be a whole number from 1 to 100')
    await refused('/admin/users?limit=ten', '/limit', 'must be a whole number from 1 to 100')
    await refused('/admin/users?after=somewhere', '/after', 'must be the next cursor of a page before')
    await refused(`/admin/users?query=${'a'.repeat(255)}`, '/query', 'must have at most 254 characters')
    await refused('/admin/audit?limit=201', '/limit', 'must be a whole number from 1 to 200')
    await refused('/admin/audit?user=12', '/user', 'must be a user id (10 digits)')
    await refused(
      '/admin/audit?kind=Login',
      '/kind',
      'must be an event kind (1 to 32 of the characters a-z _)',
    )
    await refused(
      '/admin/audit?since=yesterday',
      '/since',
      'must be an ISO 8601 date or time, or epoch milliseconds',
    )
    await refused(
      '/admin/audit?since=2026-02-30',
      '/since',
      'must be an ISO 8601 date or time, or epoch milliseconds',
    )
    await refused('/admin/audit?after=1.2.3', '/after', 'must be the next cursor of a page before')
  })

  it('R4.27.9 the audit trail: newest first, in keyset pages, by user, kind and since; admins’ acts with their actor', async () => {
    const user = generateUserId()
    const base = Date.now() - 3_600_000
    const event = (i: number): SecurityEvent => ({
      // ten events to a millisecond: the pages cut through events of one time
      at: base + Math.floor(i / 10),
      type: i % 3 === 0 ? 'login_failed' : 'login_succeeded',
      userId: user,
      clientAddress: '198.51.100.1',
      requestId: `r${i}`,
      reason: i % 3 === 0 ? 'wrong_password' : null,
    })
    await service.stores.audit.append(Array.from({ length: 450 }, (_, i) => event(i)))
    const trail = async (query: Record<string, string>) => {
      const found: Array<Record<string, unknown>> = []
      let after: string | null = null
      for (;;) {
        const search = new URLSearchParams({ ...query, ...(after === null ? {} : { after }) })
        const reply = await adminCall(service.app, 'GET', `/admin/audit?${search}`, admin.accessToken)
        expect(reply.status, reply.text).toBe(200)
        found.push(...reply.body.data.events)
        after = reply.body.data.next
        if (after === null) return found
      }
    }
    const all = await trail({ user, limit: '200' })
    expect(all.map((e) => e.request_id)).toEqual(Array.from({ length: 450 }, (_, i) => `r${449 - i}`))
    expect(all[0]).toEqual({
      id: expect.stringMatching(/^[0-9]+$/),
      kind: 'login_succeeded',
      user_id: user,
      at: new Date(base + 44).toISOString(),
      ip: '198.51.100.1',
      reason: null,
      actor: null,
      request_id: 'r449',
      omitted: null,
    })
    const failed = await trail({ user, kind: 'login_failed', limit: '7' })
    expect(failed).toHaveLength(150)
    expect(failed.every((e) => e.kind === 'login_failed')).toBe(true)
    // since, as an ISO time and as epoch milliseconds: from the event of r400 on
    expect((await trail({ user, since: new Date(base + 40).toISOString() })).length).toBe(50)
    expect((await trail({ user, since: String(base + 40) })).length).toBe(50)
    expect(await trail({ user, kind: 'account_deleted' })).toEqual([])

    // an admin's act, with its actor, and found by its kind without a user
    const target = await newAdmin(service)
    const revoked = await adminCall(
      service.app,
      'POST',
      `/admin/users/${target.id}/revoke`,
      admin.accessToken,
    )
    expect(revoked.status).toBe(200)
    await service.flushAudit()
    const acts = await trail({ kind: 'sessions_revoked' })
    expect(acts[0]).toMatchObject({
      kind: 'sessions_revoked',
      user_id: target.id,
      reason: 'admin',
      actor: admin.id,
      ip: '127.0.0.1',
    })
    // the admin's reads are no events
    const reads = await trail({ user: admin.id })
    expect(reads.every((e) => e.kind !== 'sessions_revoked')).toBe(true)
  })

  it('R4.27.9 an unknown user id finds nothing, a deleted account’s still finds its events', async () => {
    const reply = await adminCall(
      service.app,
      'GET',
      `/admin/audit?user=${generateUserId()}`,
      admin.accessToken,
    )
    expect(reply.body.data).toEqual({ events: [], next: null })
    const target = await newAdmin(service)
    await service.stores.users.setRole(target.id, 'user', new Date().toISOString())
    expect(
      (await adminCall(service.app, 'DELETE', `/admin/users/${target.id}`, admin.accessToken)).status,
    ).toBe(204)
    await service.flushAudit()
    const events = await adminCall(service.app, 'GET', `/admin/audit?user=${target.id}`, admin.accessToken)
    expect(events.body.data.events[0]).toMatchObject({
      kind: 'account_deleted',
      actor: admin.id,
      ip: '127.0.0.1',
    })
    expectError(
      await adminCall(service.app, 'GET', `/admin/users/${target.id}`, admin.accessToken),
      404,
      'User not found',
    )
  })
  it('R4.27.4 an account deleted or added between two pages makes no page repeat or skip another one', async () => {
    const firstPage = await adminCall(service.app, 'GET', '/admin/users?limit=100', admin.accessToken)
    const seen: string[] = firstPage.body.data.users.map((user: { id: string }) => user.id)
    // one of the first page goes, one more arrives
    const gone = seen.find((id) => id !== admin.id) as string
    expect(await service.stores.users.delete(gone)).toBe(true)
    const added = generateUserId()
    await service.stores.users.create(
      newUserRecord({
        id: added,
        email: `${tag}-added@example.com`,
        passwordHash: STORED_PASSWORD_HASH,
        emailVerified: false,
        createdAt: new Date().toISOString(),
      }),
    )
    const rest = (await pages({ limit: '100', after: firstPage.body.data.next })).flat()
    const now = (await service.stores.users.list({ limit: 5_000 })).map((user) => user.id)
    expect(now).toContain(added)
    expect(now).not.toContain(gone)
    // the pages after the first: every account after its last id, as the accounts are now, none of the first's
    expect(rest).toEqual(now.filter((id) => id > (seen.at(-1) as string)))
    expect(rest.filter((id) => seen.includes(id))).toEqual([])
  })
})
