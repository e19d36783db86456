import { describe, expect, it } from 'vitest'
import { systemClock } from '../../src/clock.js'
import { loadConfig } from '../../src/config.js'
import type { SecurityEvent } from '../../src/security-event.js'
import { openStores } from '../../src/storage/open-stores.js'
import type { Stores, UserRecord } from '../../src/storage/stores.js'
import { contractAccounts, useContractStores } from '../storage/contract-setup.js'
import { type BackendInstance, backends } from '../support/backends.js'

/** The accounts and the trail are in the SQL database whatever REDIS_URL says: one run per engine. */
const sqlBackends = backends.filter((backend) => !backend.redis)

/**
 * What the admin API (docs/api.md §4.27) needs of the stores, on every SQL engine: the prefix search and keyset pages of
 * accounts, the count of a role's active accounts, the writes under the last-admin rule (KeepRole), also from two
 * connection pools at once, and keyset pages of the audit trail with their filters and the `actor` column.
 */
describe.each(sqlBackends)('admin stores [$name]', (backend) => {
  let instance: BackendInstance
  let stores: Stores
  useContractStores(backend, (opened) => {
    instance = opened.instance
    stores = opened.stores
  })
  const { created } = contractAccounts('admin-store', () => stores)
  let roles = 0
  /** A role of its own for each test: the counts of one test are not another's. */
  const freshRole = () => `keep-${roles++}`
  const now = () => new Date().toISOString()
  const ids = (users: readonly UserRecord[]) => users.map((user) => user.id)
  const byId = (a: string, b: string) => (a < b ? -1 : 1)

  it('list with a prefix: the accounts whose e-mail or username starts with it, byte for byte, in id order', async () => {
    const tag = `p${Date.now().toString(36)}`
    const ada = await created({ email: `${tag}ada@example.com` })
    const adam = await created({ email: `${tag}adam@example.com` })
    const bob = await created({ email: `${tag}bob@example.com` })
    const named = await created({ email: `other-${tag}@example.com` })
    expect(
      await stores.users.updateProfile(
        named.id,
        { username: `${tag}ada_x`, nickname: null, bio: null },
        now(),
      ),
    ).toBe('updated')
    const found = (prefix: string, page: { after?: string; limit?: number } = {}) =>
      stores.users.list({ prefix, limit: page.limit ?? 50, after: page.after }).then(ids)
    expect(await found(`${tag}ada`)).toEqual([ada.id, adam.id, named.id].sort(byId))
    expect(await found(`${tag}adam`)).toEqual([adam.id])
    expect(await found(`${tag}b`)).toEqual([bob.id])
    expect(await found(tag)).toEqual([ada.id, adam.id, bob.id, named.id].sort(byId))
    // the range's end: the prefix's last character one higher is not in it
    expect(await found(`${tag}ad`)).toEqual([ada.id, adam.id, named.id].sort(byId))
    expect(await found(`${tag}ac`)).toEqual([])
    expect(await found(`${tag}ada@example.com`)).toEqual([ada.id])
    // a prefix no e-mail or username can have finds none (nothing stored is upper-case or non-ASCII)
    expect(await found(`${tag.toUpperCase()}ADA`)).toEqual([])
    expect(await found(`${tag}ädä`)).toEqual([])
    expect(await found(`${tag} ada`)).toEqual([])
    // keyset pages of a search
    const all = await found(tag)
    const first = await found(tag, { limit: 2 })
    expect(first).toEqual(all.slice(0, 2))
    expect(await found(tag, { limit: 2, after: first[1] })).toEqual(all.slice(2))
    // SQL's wildcards are nothing special
    expect(await found('%')).toEqual([])
    expect(await found('_')).toEqual([])
  })

  it('countActive: the active accounts of a role', async () => {
    const role = freshRole()
    expect(await stores.users.countActive(role)).toBe(0)
    await created({ role })
    const disabled = await created({ role })
    await created({ role, status: 'disabled' })
    expect(await stores.users.countActive(role)).toBe(3 - 1)
    expect(await stores.users.setStatus(disabled.id, 'disabled', now())).toBe(true)
    expect(await stores.users.countActive(role)).toBe(1)
  })

  it('KeepRole: the last active account of the role keeps it, stays active and is not deleted', async () => {
    const role = freshRole()
    const first = await created({ role })
    const second = await created({ role })
    const inactive = await created({ role, status: 'disabled' })
    // two active: one may go
    expect(await stores.users.setRole(first.id, 'user', now(), role)).toBe(true)
    // the last active one: refused, nothing changed
    expect(await stores.users.setRole(second.id, 'user', now(), role)).toBe(false)
    expect(await stores.users.setStatus(second.id, 'disabled', now(), role)).toBe(false)
    expect(await stores.users.delete(second.id, { keep: role })).toBe(false)
    expect(await stores.users.findById(second.id)).toMatchObject({ role, status: 'active' })
    // without `keep`, the shell's writes are made
    expect(await stores.users.setStatus(second.id, 'disabled', now())).toBe(true)
    expect(await stores.users.setStatus(second.id, 'active', now())).toBe(true)
    // what cannot take the role away is made whatever the count: a disabled account's, a promotion, an enable
    expect(await stores.users.setRole(inactive.id, 'user', now(), role)).toBe(true)
    expect(await stores.users.setRole(first.id, role, now(), role)).toBe(true)
    expect(await stores.users.setStatus(inactive.id, 'active', now(), role)).toBe(true)
    const plain = await created()
    expect(await stores.users.setStatus(plain.id, 'disabled', now(), role)).toBe(true)
    expect(await stores.users.delete(plain.id, { keep: role })).toBe(true)
    // three active again: two may go, the third may not
    expect(await stores.users.countActive(role)).toBe(2)
    expect(await stores.users.delete(first.id, { keep: role })).toBe(true)
    expect(await stores.users.delete(second.id, { keep: role })).toBe(false)
    // a missing account: false as before
    expect(await stores.users.setRole(first.id, 'user', now(), role)).toBe(false)
  })

  it('KeepRole across two connection pools: of the last two accounts taken away at once, one remains, every round', async () => {
    const other = await openStores(loadConfig(instance.env).storage, systemClock)
    try {
      for (let round = 0; round < 8; round++) {
        const role = freshRole()
        const a = await created({ role })
        const b = await created({ role })
        // each pool takes away the account the other does not, each kind of write in turn
        const takeAway = (on: Stores, user: UserRecord) => {
          if (round % 3 === 0) return on.users.setRole(user.id, 'user', now(), role)
          if (round % 3 === 1) return on.users.setStatus(user.id, 'disabled', now(), role)
          return on.users.delete(user.id, { keep: role })
        }
        const results = await Promise.all([takeAway(stores, a), takeAway(other, b)])
        expect(results.filter(Boolean), `round ${round}`).toHaveLength(1)
        expect(await stores.users.countActive(role), `round ${round}`).toBe(1)
      }
    } finally {
      await other.close()
    }
  })

  it('audit pages: newest first, by time then id, filtered by user, kind and since, with the actor', async () => {
    const user = await created()
    const admin = await created()
    const base = Date.now() - 60_000
    const event = (
      at: number,
      type: SecurityEvent['type'],
      extra: Partial<SecurityEvent> = {},
    ): SecurityEvent => ({
      at,
      type,
      userId: user.id,
      clientAddress: '203.0.113.9',
      requestId: `req-${at}`,
      reason: null,
      ...extra,
    })
    // five events of one millisecond: their order is the order they were stored
    const events = [
      event(base, 'registered'),
      ...Array.from({ length: 5 }, (_, i) =>
        event(base + 1000, 'login_succeeded', { requestId: `same-${i}` }),
      ),
      event(base + 2000, 'account_disabled', { reason: 'admin', actor: admin.id }),
      event(base + 3000, 'login_failed', { userId: null, reason: 'unknown_email' }),
    ]
    await stores.audit.append(events)
    const page = await stores.audit.page({ userId: user.id, limit: 100 })
    expect(page.map((e) => e.requestId)).toEqual([
      `req-${base + 2000}`,
      'same-4',
      'same-3',
      'same-2',
      'same-1',
      'same-0',
      `req-${base}`,
    ])
    expect(page[0]).toEqual({
      id: expect.stringMatching(/^[0-9]+$/),
      ...events[6],
    })
    // ids grow with the order of storing
    expect(page.map((e) => BigInt(e.id))).toEqual(
      [...page.map((e) => BigInt(e.id))].sort((a, b) => (a > b ? -1 : 1)),
    )
    // keyset pages of two: the same events, none twice, none skipped, across the events of one millisecond
    const paged: string[] = []
    let after: { at: number; id: number } | undefined
    for (;;) {
      const next = await stores.audit.page({ userId: user.id, limit: 2, after })
      paged.push(...next.map((e) => e.id))
      const last = next.at(-1)
      if (next.length < 2 || last === undefined) break
      after = { at: last.at, id: Number(last.id) }
    }
    expect(paged).toEqual(page.map((e) => e.id))
    // filters
    const kinds = (query: Parameters<Stores['audit']['page']>[0]) =>
      stores.audit.page(query).then((found) => found.map((e) => e.type))
    expect(await kinds({ userId: user.id, kind: 'login_succeeded', limit: 100 })).toEqual(
      Array(5).fill('login_succeeded'),
    )
    expect(await kinds({ userId: user.id, since: base + 1500, limit: 100 })).toEqual(['account_disabled'])
    expect(await kinds({ kind: 'account_disabled', since: base, limit: 100 })).toEqual(['account_disabled'])
    expect(await kinds({ kind: 'no_such_kind', limit: 100 })).toEqual([])
    expect(await kinds({ since: base + 2500, limit: 100 })).toEqual(expect.arrayContaining(['login_failed']))
    // the older reader sees the actor too
    expect((await stores.audit.list({ userId: user.id })).at(-1)).toMatchObject({
      type: 'account_disabled',
      actor: admin.id,
    })
    // and an event without one has none
    expect(page.at(-1)).not.toHaveProperty('actor')
  })
})
