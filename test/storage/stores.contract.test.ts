import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { beforeAll, describe, expect, it } from 'vitest'
import { generateUserId } from '../../src/auth/user-id.js'
import type { SecurityEvent } from '../../src/security-event.js'
import { createMemoryLoginAttemptStore } from '../../src/storage/memory/memory-login-attempt-store.js'
import type {
  BackoffPolicy,
  LoginAttemptStore,
  SessionLimit,
  StoredSession,
  Stores,
} from '../../src/storage/stores.js'
import { type BackendInstance, backends } from '../support/backends.js'
import { contractAccounts, useContractStores } from './contract-setup.js'

/** The contract every storage backend keeps, run against real servers (DECISIONS: Storage). */
describe.each(backends)('storage contract [$name]', (backend) => {
  let instance: BackendInstance
  let stores: Stores
  useContractStores(backend, (opened) => {
    instance = opened.instance
    stores = opened.stores
  })

  let serial = 0
  const { newUser, created } = contractAccounts('contract', () => stores)
  const digest = (n: number) => n.toString(16).padStart(64, '0')
  const inAnHour = () => Date.now() + 3_600_000
  /** A session of `userId` whose current token has digest(n), started now and valid for an hour. */
  const newSession = (userId: string, n: number, overrides: Partial<StoredSession> = {}): StoredSession => {
    const now = Date.now()
    return {
      id: randomBytes(16).toString('hex'),
      userId,
      digest: digest(n),
      expiresAt: now + 3_600_000,
      createdAt: now,
      lastUsedAt: now,
      device: 'Firefox on Linux',
      clientAddress: '203.0.113.0/24',
      previousDigest: null,
      rotatedAt: null,
      secondFactor: false,
      ...overrides,
    }
  }
  /** Starts newSession(userId, n, overrides) with `limit`, expecting it stored; resolves with it. */
  const started = async (
    userId: string,
    n: number,
    limit: SessionLimit = 'single',
    overrides: Partial<StoredSession> = {},
  ) => {
    const session = newSession(userId, n, overrides)
    expect(await stores.sessions.start(session, limit, Date.now())).toBe(true)
    return session
  }
  /** Rotates `userId`'s token from digest(from) to digest(to), valid for an hour, at `now`. */
  const rotate = (userId: string, from: number, to: number, now = Date.now()) =>
    stores.sessions.rotate(
      userId,
      digest(from),
      { digest: digest(to), expiresAt: inAnHour(), clientAddress: null, lifetimeMs: null },
      now,
    )
  /** The ids of the user's sessions, most recently used first. */
  const listed = async (userId: string, now = Date.now()) =>
    (await stores.sessions.list(userId, now)).map((session) => session.id)

  describe('UserStore', () => {
    it('create, then find by id and by e-mail', async () => {
      const user = await created()
      expect(await stores.users.findById(user.id)).toEqual(user)
      expect(await stores.users.findByEmail(user.email)).toEqual(user)
    })

    it('finds nothing for an unknown id or e-mail', async () => {
      expect(await stores.users.findById('1000000001')).toBeNull()
      expect(await stores.users.findByEmail('nobody-here@example.com')).toBeNull()
    })

    it('reads by id asked together each get their own account, or null (one statement: batched-reads.ts)', async () => {
      // 70 accounts: more than one read's 64, and counts that are no power of two
      const users = await Promise.all(Array.from({ length: 70 }, () => created()))
      const ids = [...users.map((user) => user.id), '1000000001', users[3]?.id ?? '']
      const found = await Promise.all(ids.map((id) => stores.users.findById(id)))
      expect(found).toEqual([...users, null, users[3]])
      // each caller gets an object of its own, even for the same id
      expect(found[3]).not.toBe(found[71])
      const [alone] = await Promise.all([stores.users.findById(users[5]?.id ?? '')])
      expect(alone).toEqual(users[5])
    })

    it('reports a taken e-mail and a taken id instead of throwing', async () => {
      const user = await created()
      expect(await stores.users.create(newUser({ email: user.email }))).toBe('email_taken')
      expect(await stores.users.create(newUser({ id: user.id }))).toBe('id_taken')
    })

    it('of concurrent creations with one e-mail exactly one is created', async () => {
      const email = newUser().email
      const results = await Promise.all(
        Array.from({ length: 10 }, () => stores.users.create(newUser({ email }))),
      )
      expect(results.filter((result) => result === 'created')).toHaveLength(1)
      expect(results.filter((result) => result === 'email_taken')).toHaveLength(9)
    })

    it('keeps values exactly, including quotes and long hashes', async () => {
      const user = await created({
        email: `o'neil-${serial++}@example.com`,
        passwordHash: `$argon2id$${'x'.repeat(200)}`,
      })
      expect(await stores.users.findByEmail(user.email)).toEqual(user)
    })

    it('updatePasswordHash replaces the hash only', async () => {
      const user = await created()
      await stores.users.updatePasswordHash(user.id, '$argon2id$new')
      expect(await stores.users.findById(user.id)).toEqual({ ...user, passwordHash: '$argon2id$new' })
    })

    it('an account without a password and a verified one round-trip; updatePasswordHash sets and clears it', async () => {
      const user = await created({ passwordHash: null, emailVerified: true })
      expect(await stores.users.findById(user.id)).toEqual(user)
      expect(await stores.users.findByEmail(user.email)).toEqual(user)
      await stores.users.updatePasswordHash(user.id, '$argon2id$set')
      expect(await stores.users.findById(user.id)).toEqual({ ...user, passwordHash: '$argon2id$set' })
      await stores.users.updatePasswordHash(user.id, null)
      expect(await stores.users.findById(user.id)).toEqual(user)
    })

    it('claimAddress: the first verifies the address and cancels the password, true once; false for no account', async () => {
      const user = await created()
      const other = await created()
      expect(await stores.users.claimAddress(user.id)).toBe(true)
      expect(await stores.users.findById(user.id)).toEqual({
        ...user,
        passwordHash: null,
        emailVerified: true,
      })
      // a password set afterwards (a reset) is not cancelled by a later proof
      await stores.users.updatePasswordHash(user.id, '$argon2id$after')
      expect(await stores.users.claimAddress(user.id)).toBe(false)
      expect((await stores.users.findById(user.id))?.passwordHash).toBe('$argon2id$after')
      expect(await stores.users.claimAddress('1000000001')).toBe(false)
      expect(await stores.users.findById(other.id)).toEqual(other)
    })

    it('of 10 concurrent claimAddress calls exactly one is true', async () => {
      const user = await created()
      const results = await Promise.all(Array.from({ length: 10 }, () => stores.users.claimAddress(user.id)))
      expect(results.filter(Boolean)).toHaveLength(1)
    })

    it('markEmailVerified keeps the password; true for an account, verified or not, false for none', async () => {
      const user = await created()
      expect(await stores.users.markEmailVerified(user.id)).toBe(true)
      expect(await stores.users.findById(user.id)).toEqual({ ...user, emailVerified: true })
      expect(await stores.users.markEmailVerified(user.id)).toBe(true)
      expect(await stores.users.claimAddress(user.id)).toBe(false)
      expect(await stores.users.markEmailVerified('1000000001')).toBe(false)
    })

    it('changeEmail: changed and verified; email_taken leaves both accounts as they were; missing without one', async () => {
      const user = await created()
      const other = await created()
      const email = newUser().email
      expect(await stores.users.changeEmail(user.id, email)).toBe('changed')
      const changed = { ...user, email, emailVerified: true }
      expect(await stores.users.findById(user.id)).toEqual(changed)
      expect(await stores.users.findByEmail(email)).toEqual(changed)
      expect(await stores.users.findByEmail(user.email)).toBeNull()
      // its own address again is no conflict
      expect(await stores.users.changeEmail(user.id, email)).toBe('changed')
      expect(await stores.users.changeEmail(user.id, other.email)).toBe('email_taken')
      expect(await stores.users.findById(user.id)).toEqual(changed)
      expect(await stores.users.findById(other.id)).toEqual(other)
      expect(await stores.users.changeEmail('1000000001', newUser().email)).toBe('missing')
      // the old address is free for another account
      expect(await stores.users.create(newUser({ email: user.email }))).toBe('created')
    })

    it('of concurrent changes of two accounts to one e-mail exactly one is changed', async () => {
      const [first, second] = [await created(), await created()]
      const email = newUser().email
      const results = await Promise.all(
        [first, second].flatMap((user) => [1, 2, 3].map(() => stores.users.changeEmail(user.id, email))),
      )
      const winners = new Set(
        results.flatMap((result, i) => (result === 'changed' ? [i < 3 ? first.id : second.id] : [])),
      )
      expect(winners.size).toBe(1)
      expect(results.filter((result) => result === 'email_taken')).toHaveLength(3)
      expect((await stores.users.findByEmail(email))?.id).toBe([...winners][0])
    })

    it('list: every account once, in id order, page by page after the last id', async () => {
      const mine = await Promise.all(Array.from({ length: 5 }, () => created()))
      const all = []
      let after: string | undefined
      for (;;) {
        const page = await stores.users.list({ after, limit: 2 })
        expect(page.length).toBeLessThanOrEqual(2)
        if (page.length === 0) break
        all.push(...page)
        after = page.at(-1)?.id
      }
      const ids = all.map((user) => user.id)
      expect(ids).toEqual([...ids].sort())
      expect(new Set(ids).size).toBe(ids.length)
      for (const user of mine) expect(all).toContainEqual(user)
      expect(await stores.users.list({ limit: ids.length + 10 })).toEqual(all)
      expect(await stores.users.list({ after: '9999999999', limit: 10 })).toEqual([])
    })

    it('delete removes the account and its sessions; true only when there was one', async () => {
      const user = await created()
      const other = await created()
      await started(user.id, 60, 10)
      await started(user.id, 61, 10)
      await stores.sessions.retire(user.id, inAnHour())
      expect(await stores.users.delete(user.id)).toBe(true)
      expect(await stores.users.delete(user.id)).toBe(false)
      expect(await stores.users.findById(user.id)).toBeNull()
      expect(await stores.users.findByEmail(user.email)).toBeNull()
      expect(await listed(user.id)).toEqual([])
      expect(await rotate(user.id, 60, 62)).toBe(false)
      expect(await stores.users.findById(other.id)).toEqual(other)
      // the e-mail is free again
      expect(await stores.users.create(newUser({ email: user.email }))).toBe('created')
    })
  })

  describe('SessionStore', () => {
    it('start, then find by id and by digest and list: every field as stored', async () => {
      const user = await created()
      const session = await started(user.id, 1, 'single', {
        device: `Opera "12" on it's 🦊 — ${'x'.repeat(40)}`,
        clientAddress: null,
      })
      expect(await stores.sessions.find(user.id, { id: session.id }, Date.now())).toEqual(session)
      expect(await stores.sessions.find(user.id, { digest: digest(1) }, Date.now())).toEqual(session)
      expect(await stores.sessions.find(user.id, { previousDigest: digest(1) }, Date.now())).toBeNull()
      expect(await stores.sessions.list(user.id, Date.now())).toEqual([session])
      expect(
        await stores.sessions.find(user.id, { id: randomBytes(16).toString('hex') }, Date.now()),
      ).toBeNull()
      expect(await stores.sessions.find(user.id, { digest: digest(2) }, Date.now())).toBeNull()
    })

    it('start with single replaces the earlier session, and the per-device sessions beside it', async () => {
      const user = await created()
      const first = await started(user.id, 10)
      const second = await started(user.id, 11)
      expect(await listed(user.id)).toEqual([second.id])
      expect(await stores.sessions.find(user.id, { id: first.id }, Date.now())).toBeNull()
      expect(await rotate(user.id, 10, 12)).toBe(false)
      // sessions of the per-device mode, then a start in single mode again
      await started(user.id, 13, 10)
      await started(user.id, 14, 10)
      expect(await listed(user.id)).toHaveLength(3)
      const last = await started(user.id, 15)
      expect(await listed(user.id)).toEqual([last.id])
      expect(await rotate(user.id, 13, 16)).toBe(false)
      expect(await rotate(user.id, 15, 16)).toBe(true)
    })

    it('of 10 concurrent starts with single exactly one session remains, one of theirs', async () => {
      const user = await created()
      await started(user.id, 20, 10)
      await started(user.id, 21, 10)
      const sessions = Array.from({ length: 10 }, (_, i) => newSession(user.id, 100 + i))
      const results = await Promise.all(
        sessions.map((session) => stores.sessions.start(session, 'single', Date.now())),
      )
      expect(results).toEqual(sessions.map(() => true))
      const [remaining, ...others] = await stores.sessions.list(user.id, Date.now())
      expect(others).toEqual([])
      expect(sessions).toContainEqual(remaining)
    })

    it('with a limit of 10, the 11th start ends the least recently used session', async () => {
      const user = await created()
      // started 100 s ago, one a second: sessions[0] is the least recently used
      const t0 = Date.now() - 100_000
      // ten at once: none is beyond the limit, whatever order they are stored in
      const sessions = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          started(user.id, 30 + i, 10, { createdAt: t0 + i * 1000, lastUsedAt: t0 + i * 1000 }),
        ),
      )
      expect(await listed(user.id)).toEqual(sessions.map((session) => session.id).reverse())
      // a rotation makes sessions[0] the most recently used: sessions[1] is the least now
      expect(await rotate(user.id, 30, 50)).toBe(true)
      const eleventh = await started(user.id, 40, 10)
      const ids = await listed(user.id)
      expect(ids).toHaveLength(10)
      expect(ids).not.toContain(sessions[1]?.id)
      expect(ids.slice(0, 2).sort()).toEqual([eleventh.id, sessions[0]?.id].sort())
      await started(user.id, 41, 10)
      expect(await listed(user.id)).not.toContain(sessions[2]?.id)
      expect(await listed(user.id)).toHaveLength(10)
      // a lower limit ends every session beyond it at once
      const only = await started(user.id, 42, 3)
      expect(await listed(user.id)).toHaveLength(3)
      expect(await listed(user.id)).toContain(only.id)
    })

    it('of concurrent starts with a limit, the limit remains: the newest, the least recently used ended', async () => {
      const user = await created()
      const t0 = Date.now() - 100_000
      const earlier = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          started(user.id, 60 + i, 10, { createdAt: t0 + i * 1000, lastUsedAt: t0 + i * 1000 }),
        ),
      )
      const sessions = Array.from({ length: 6 }, (_, i) => newSession(user.id, 70 + i))
      const results = await Promise.all(
        sessions.map((session) => stores.sessions.start(session, 10, Date.now())),
      )
      expect(results).toEqual(sessions.map(() => true))
      const ids = await listed(user.id)
      expect(ids).toHaveLength(10)
      expect([...ids].sort()).toEqual([...sessions, ...earlier.slice(4)].map((session) => session.id).sort())
    })

    it('rotate succeeds once from the current digest, then only from the new one, and records the rotation', async () => {
      const user = await created()
      const session = await started(user.id, 1, 'single', { createdAt: Date.now() - 5_000 })
      const now = Date.now()
      const next = { digest: digest(2), expiresAt: now + 7_200_000, clientAddress: '198.51.100.0/24' }
      expect(await stores.sessions.rotate(user.id, digest(1), { ...next, lifetimeMs: null }, now)).toBe(true)
      const rotated = {
        ...session,
        ...next,
        previousDigest: digest(1),
        rotatedAt: now,
        lastUsedAt: now,
      }
      expect(await stores.sessions.find(user.id, { digest: digest(2) }, now)).toEqual(rotated)
      expect(await stores.sessions.find(user.id, { previousDigest: digest(1) }, now)).toEqual(rotated)
      expect(await stores.sessions.find(user.id, { digest: digest(1) }, now)).toBeNull()
      expect(await rotate(user.id, 1, 3)).toBe(false)
      expect(await rotate(user.id, 2, 4, now + 1)).toBe(true)
      expect(await stores.sessions.find(user.id, { previousDigest: digest(1) }, now + 1)).toBeNull()
      expect(await stores.sessions.find(user.id, { id: session.id }, now + 1)).toMatchObject({
        digest: digest(4),
        previousDigest: digest(2),
        rotatedAt: now + 1,
        clientAddress: null,
        createdAt: session.createdAt,
      })
    })

    it('rotate is false for a user without a session', async () => {
      const user = await created()
      expect(await rotate(user.id, 1, 2)).toBe(false)
    })

    it('an expired session is gone for every operation from its expiry on, to the millisecond', async () => {
      const user = await created()
      const expiresAt = Date.now() + 60_000
      const session = await started(user.id, 20, 10, { expiresAt })
      expect(await stores.sessions.find(user.id, { id: session.id }, expiresAt)).toBeNull()
      expect(await stores.sessions.find(user.id, { digest: digest(20) }, expiresAt)).toBeNull()
      expect(await stores.sessions.find(user.id, { id: session.id }, expiresAt - 1)).toEqual(session)
      expect(await listed(user.id, expiresAt)).toEqual([])
      expect(await listed(user.id, expiresAt - 1)).toEqual([session.id])
      expect(await stores.sessions.end(user.id, session.id, expiresAt)).toBe(false)
      expect(await stores.sessions.endAll(user.id, expiresAt)).toBe(0)
      expect(await rotate(user.id, 20, 21, expiresAt)).toBe(false)
      expect(await rotate(user.id, 20, 21, expiresAt - 1)).toBe(true)
      expect(
        await stores.sessions.find(user.id, { previousDigest: digest(20) }, expiresAt - 1),
      ).toMatchObject({
        id: session.id,
      })
    })

    it('of 50 concurrent rotations from one digest exactly one succeeds; the other sessions are untouched', async () => {
      const user = await created()
      const before = await started(user.id, 50, 10)
      await started(user.id, 51, 10)
      const after = await started(user.id, 52, 10)
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => rotate(user.id, 51, 100 + i)))
      expect(results.filter(Boolean)).toHaveLength(1)
      const winner = 100 + results.indexOf(true)
      expect(await stores.sessions.find(user.id, { digest: digest(winner) }, Date.now())).not.toBeNull()
      expect(await stores.sessions.find(user.id, { digest: digest(50) }, Date.now())).toEqual(before)
      expect(await stores.sessions.find(user.id, { digest: digest(52) }, Date.now())).toEqual(after)
    })

    it('list: the unexpired sessions, most recently used first, then by id', async () => {
      const user = await created()
      const now = Date.now()
      const at = (n: number, lastUsedAt: number, expiresAt = now + 3_600_000) =>
        started(user.id, n, 10, { lastUsedAt, expiresAt, createdAt: now - 10_000 })
      const oldest = await at(1, now - 9_000)
      const tied = [await at(2, now - 5_000), await at(3, now - 5_000)].sort((a, b) => (a.id < b.id ? -1 : 1))
      const newest = await at(4, now - 1_000)
      const expiring = await at(5, now - 500, now + 1_000)
      expect(await listed(user.id, now)).toEqual(
        [expiring, newest, ...tied, oldest].map((session) => session.id),
      )
      expect(await listed(user.id, now + 1_000)).toEqual(
        [newest, ...tied, oldest].map((session) => session.id),
      )
      expect(await listed((await created()).id, now)).toEqual([])
    })

    it("end: the one session, true once; false for an unknown id or another user's session", async () => {
      const user = await created()
      const other = await created()
      const ended = await started(user.id, 1, 10)
      const kept = await started(user.id, 2, 10)
      const theirs = await started(other.id, 3, 10)
      expect(await stores.sessions.end(user.id, theirs.id, Date.now())).toBe(false)
      expect(await stores.sessions.end(user.id, randomBytes(16).toString('hex'), Date.now())).toBe(false)
      expect(await stores.sessions.end(user.id, ended.id, Date.now())).toBe(true)
      expect(await stores.sessions.end(user.id, ended.id, Date.now())).toBe(false)
      expect(await listed(user.id)).toEqual([kept.id])
      expect(await rotate(user.id, 1, 4)).toBe(false)
      expect(await listed(other.id)).toEqual([theirs.id])
    })

    it('endAll: every session, or all but one, counting the unexpired ones it ended', async () => {
      const user = await created()
      const sessions = [
        await started(user.id, 1, 10),
        await started(user.id, 2, 10),
        await started(user.id, 3, 10),
      ]
      // a minute from now, when this fourth session has expired
      const later = Date.now() + 60_000
      await started(user.id, 4, 10, { expiresAt: later })
      const [kept, ...others] = sessions as [StoredSession, ...StoredSession[]]
      expect(await stores.sessions.endAll(user.id, later, kept.id)).toBe(others.length)
      expect(await listed(user.id, later)).toEqual([kept.id])
      expect(await stores.sessions.endAll(user.id, later, kept.id)).toBe(0)
      expect(await stores.sessions.endAll(user.id, later)).toBe(1)
      expect(await listed(user.id, later)).toEqual([])
      expect(await stores.sessions.endAll(user.id, later)).toBe(0)
      expect(await rotate(user.id, 1, 5)).toBe(false)
    })

    it('endAllReturningIds: as endAll, naming the unexpired sessions it ended', async () => {
      const user = await created()
      const other = await created()
      const sessions = [
        await started(user.id, 11, 10),
        await started(user.id, 12, 10),
        await started(user.id, 13, 10),
      ]
      const later = Date.now() + 60_000
      await started(user.id, 14, 10, { expiresAt: later })
      const theirs = await started(other.id, 15, 10)
      const [kept, ...others] = sessions as [StoredSession, ...StoredSession[]]
      const ended = await stores.sessions.endAllReturningIds(user.id, later, kept.id)
      expect(ended.toSorted()).toEqual(others.map((session) => session.id).toSorted())
      expect(await listed(user.id, later)).toEqual([kept.id])
      expect(await stores.sessions.endAllReturningIds(user.id, later, kept.id)).toEqual([])
      expect(await stores.sessions.endAllReturningIds(user.id, later)).toEqual([kept.id])
      expect(await listed(user.id, later)).toEqual([])
      expect(await stores.sessions.endAllReturningIds(user.id, later)).toEqual([])
      expect(await rotate(user.id, 11, 16)).toBe(false)
      expect(await listed(other.id)).toEqual([theirs.id])
    })

    it('endAllReturningIds: of concurrent ends and starts, every session ended is named once', async () => {
      const user = await created()
      const first = await Promise.all([1, 2, 3, 4].map((n) => started(user.id, 20 + n, 100)))
      const ends: Promise<string[]>[] = []
      const starts: Promise<StoredSession>[] = []
      for (let round = 0; round < 4; round++) {
        ends.push(stores.sessions.endAllReturningIds(user.id, Date.now()))
        starts.push(started(user.id, 30 + round, 100))
      }
      const named = (await Promise.all(ends)).flat()
      const later = await Promise.all(starts)
      const remaining = await listed(user.id)
      // each session ended by exactly one call, and the others still there
      expect(new Set(named).size).toBe(named.length)
      expect([...named, ...remaining].toSorted()).toEqual(
        [...first, ...later].map((session) => session.id).toSorted(),
      )
    })

    it('start is true for an account, false with nothing stored for a deleted one', async () => {
      const user = await created()
      await started(user.id, 80)
      await stores.sessions.retire(user.id, inAnHour())
      expect(await stores.users.delete(user.id)).toBe(true)
      // a login that read the account before it was deleted
      expect(await stores.sessions.start(newSession(user.id, 81), 'single', Date.now())).toBe(false)
      expect(await stores.sessions.start(newSession(user.id, 82), 10, Date.now())).toBe(false)
      expect(await listed(user.id)).toEqual([])
      expect(await rotate(user.id, 81, 83)).toBe(false)
    })

    it('retire ends the sessions at once and refuses a start until the account is gone; reinstate undoes it', async () => {
      const user = await created()
      await started(user.id, 90, 10)
      await started(user.id, 91, 10)
      await stores.sessions.retire(user.id, inAnHour())
      expect(await listed(user.id)).toEqual([])
      expect(await rotate(user.id, 90, 92)).toBe(false)
      // between retire and the account's deletion: Redis refuses the start; SQL may store it, and the deletion takes it
      expect(await stores.sessions.start(newSession(user.id, 93), 'single', Date.now())).toBe(!backend.redis)
      await stores.sessions.reinstate(user.id)
      await started(user.id, 94)
      expect(await rotate(user.id, 94, 95)).toBe(true)
      // a retired user who is deleted after all: the session started in between goes with the account
      await stores.sessions.retire(user.id, inAnHour())
      expect(await stores.users.delete(user.id)).toBe(true)
      expect(await listed(user.id)).toEqual([])
    })

    it('users do not share sessions', async () => {
      const alice = await created()
      const bob = await created()
      const hers = await started(alice.id, 40)
      await started(bob.id, 41)
      expect(await rotate(bob.id, 40, 42)).toBe(false)
      expect(await stores.sessions.find(bob.id, { id: hers.id }, Date.now())).toBeNull()
      expect(await stores.sessions.find(bob.id, { digest: digest(40) }, Date.now())).toBeNull()
      expect(await stores.sessions.endAll(alice.id, Date.now())).toBe(1)
      expect(await rotate(bob.id, 41, 42)).toBe(true)
    })
  })

  describe.runIf(backend.redis)('RateCounterStore', () => {
    const counters = () => {
      if (stores.rateCounters === null) throw new Error('no rate counters with Redis')
      return stores.rateCounters
    }
    let keys = 0
    const newKey = () => `contract-${keys++}-${Date.now()}`

    it('counts the hits on a key within its window, each key apart', async () => {
      const [first, second] = [newKey(), newKey()]
      expect(await counters().increment(first, 60_000)).toEqual({ count: 1, resetAfterMs: 60_000 })
      const again = await counters().increment(first, 60_000)
      expect(again.count).toBe(2)
      expect(again.resetAfterMs).toBeGreaterThan(0)
      expect(again.resetAfterMs).toBeLessThanOrEqual(60_000)
      expect(await counters().increment(second, 60_000)).toEqual({ count: 1, resetAfterMs: 60_000 })
    })

    it('starts again from 1 once the window has ended', async () => {
      const key = newKey()
      await counters().increment(key, 20)
      await counters().increment(key, 20)
      // waiting longer than the window can only make it more certain that it has ended
      await new Promise((resolve) => setTimeout(resolve, 60))
      expect((await counters().increment(key, 60_000)).count).toBe(1)
    })

    it('of 50 concurrent hits on one key each gets its own count', async () => {
      const key = newKey()
      const counts = await Promise.all(Array.from({ length: 50 }, () => counters().increment(key, 60_000)))
      expect(counts.map((hit) => hit.count).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 50 }, (_, i) => i + 1),
      )
    })

    it('keeps each counter under <REDIS_KEY_PREFIX>rate-limit:, expiring with its window', async () => {
      const key = newKey()
      await counters().increment(key, 60_000)
      const redis = new Redis(instance.env.REDIS_URL as string, { lazyConnect: true })
      await redis.connect()
      try {
        const ttl = await redis.pttl(`${instance.env.REDIS_KEY_PREFIX}rate-limit:${key}`)
        expect(ttl).toBeGreaterThan(0)
        expect(ttl).toBeLessThanOrEqual(60_000)
      } finally {
        redis.disconnect()
      }
    })
  })

  it.skipIf(backend.redis)('without Redis each process counts for itself: no shared rate counters', () => {
    expect(stores.rateCounters).toBeNull()
    expect(stores.loginAttempts).toBeNull()
  })

  // in Redis with REDIS_URL; otherwise the in-process store the service then uses
  describe(`LoginAttemptStore (${backend.redis ? 'redis' : 'in-process'})`, () => {
    let attempts: LoginAttemptStore
    beforeAll(() => {
      attempts = stores.loginAttempts ?? createMemoryLoginAttemptStore()
    })
    let keys = 0
    const newKey = () => `contract-${keys++}-${Date.now()}`
    const policy: BackoffPolicy = { free: 2, baseDelayMs: 1_000, maxDelayMs: 4_000, forgetAfterMs: 60_000 }
    const t0 = Date.now()

    it('take: the free attempts at once, then a wait that doubles up to the maximum', async () => {
      const key = newKey()
      expect(await attempts.take(key, t0, policy)).toBe(0)
      expect(await attempts.take(key, t0, policy)).toBe(0)
      expect(await attempts.take(key, t0 + 400, policy)).toBe(600)
      expect(await attempts.take(key, t0 + 1_000, policy)).toBe(0)
      expect(await attempts.take(key, t0 + 1_000, policy)).toBe(2_000)
      expect(await attempts.take(key, t0 + 3_000, policy)).toBe(0)
      expect(await attempts.take(key, t0 + 3_000, policy)).toBe(4_000)
      expect(await attempts.take(key, t0 + 7_000, policy)).toBe(0)
      // capped: 4 s again, not 8
      expect(await attempts.take(key, t0 + 7_000, policy)).toBe(4_000)
      // another key has its own record
      expect(await attempts.take(newKey(), t0 + 7_000, policy)).toBe(0)
    })

    it('take: a record is forgotten forgetAfterMs after its last attempt', async () => {
      const key = newKey()
      const short = { ...policy, forgetAfterMs: 5_000 }
      for (let i = 0; i < 2; i++) await attempts.take(key, t0, short)
      expect(await attempts.take(key, t0 + 4_999, short)).toBe(0)
      expect(await attempts.take(key, t0 + 5_000, short)).toBeGreaterThan(0)
      expect(await attempts.take(key, t0 + 4_999 + 5_000, short)).toBe(0)
      expect(await attempts.take(key, t0 + 4_999 + 5_000, short)).toBe(0)
    })

    it('refund gives back one attempt; forget removes the record', async () => {
      const key = newKey()
      await attempts.take(key, t0, policy)
      await attempts.take(key, t0, policy)
      await attempts.refund(key, t0)
      expect(await attempts.take(key, t0, policy)).toBe(0)
      expect(await attempts.take(key, t0, policy)).toBeGreaterThan(0)
      await attempts.forget(key)
      await attempts.forget(key)
      expect(await attempts.take(key, t0, policy)).toBe(0)
      // refunding a key without a record creates none
      const other = newKey()
      await attempts.refund(other, t0)
      expect(await attempts.remembered(other, t0)).toBeNull()
    })

    it('remember, remembered and count: the attempts since a key was remembered, until it expires', async () => {
      const key = newKey()
      expect(await attempts.remembered(key, t0)).toBeNull()
      await attempts.count(key, t0)
      expect(await attempts.remembered(key, t0)).toBeNull()
      await attempts.remember(key, t0, 10_000)
      expect(await attempts.remembered(key, t0)).toBe(0)
      await attempts.count(key, t0)
      await attempts.count(key, t0)
      expect(await attempts.remembered(key, t0)).toBe(2)
      await attempts.remember(key, t0 + 1_000, 10_000)
      expect(await attempts.remembered(key, t0 + 1_000)).toBe(0)
      expect(await attempts.remembered(key, t0 + 11_000)).toBeNull()
    })

    it('of 50 concurrent takes on one key exactly the free ones are taken', async () => {
      const key = newKey()
      const waits = await Promise.all(Array.from({ length: 50 }, () => attempts.take(key, t0, policy)))
      expect(waits.filter((wait) => wait === 0)).toHaveLength(2)
    })
  })

  describe('AuditStore', () => {
    const event = (overrides: Partial<SecurityEvent> = {}): SecurityEvent => ({
      at: Date.now(),
      type: 'login_succeeded',
      userId: generateUserId(),
      clientAddress: '203.0.113.7',
      requestId: 'req-1',
      reason: null,
      ...overrides,
    })

    it('batchRows: 200 on SQLite, 500 on a database server, and one append takes that many', async () => {
      expect(stores.audit.batchRows).toBe(stores.placement.audit === 'sqlite' ? 200 : 500)
      const userId = generateUserId()
      const t0 = Date.now()
      const events = Array.from({ length: stores.audit.batchRows }, (_, i) => event({ userId, at: t0 + i }))
      await stores.audit.append(events)
      expect(await stores.audit.list({ userId })).toEqual(events)
    })

    it("append, then list: every field back, oldest first, only the user's", async () => {
      const userId = generateUserId()
      const t0 = Date.now()
      const events = [
        event({
          userId,
          at: t0,
          type: 'registered',
          clientAddress: '::ffff:127.0.0.1',
          requestId: "req-'1'",
        }),
        event({ userId, at: t0 + 1, type: 'login_failed', reason: 'wrong_password' }),
        event({
          userId,
          at: t0 + 2,
          type: 'refresh_refused',
          reason: 'reused',
          clientAddress: null,
          requestId: null,
        }),
      ]
      // appended newest first: list orders by time, not by arrival
      await stores.audit.append([event({ at: t0 + 1 }), ...[...events].reverse(), event({ userId: null })])
      expect(await stores.audit.list({ userId })).toEqual(events)
    })

    it('the omitted count of an events_omitted row comes back as a number; other events carry none', async () => {
      const userId = generateUserId()
      const at = Date.now()
      // a summary names no user in the service; one is named here so that list() reads the row back
      const summary = event({ userId, at, type: 'events_omitted', reason: 'invalid', omitted: 2_000_000 })
      const ordinary = event({ userId, at: at + 1, type: 'refresh_refused', reason: 'replayed' })
      await stores.audit.append([summary, ordinary])
      const [first, second] = await stores.audit.list({ userId })
      expect(first).toEqual(summary)
      expect(second).toEqual(ordinary)
      expect(second).not.toHaveProperty('omitted')
    })

    it('events of one millisecond come back in the order they were appended', async () => {
      const userId = generateUserId()
      const at = Date.now()
      const types = ['login_succeeded', 'refresh_succeeded', 'logout', 'login_failed'] as const
      await stores.audit.append(types.slice(0, 2).map((type) => event({ userId, at, type })))
      await stores.audit.append(types.slice(2).map((type) => event({ userId, at, type })))
      expect((await stores.audit.list({ userId })).map((e) => e.type)).toEqual(types)
    })

    it('list: since is inclusive; limit keeps the latest, still oldest first', async () => {
      const userId = generateUserId()
      const t0 = Date.now()
      await stores.audit.append(Array.from({ length: 10 }, (_, i) => event({ userId, at: t0 + i * 1000 })))
      const times = async (query: { since?: number; limit?: number }) =>
        (await stores.audit.list({ userId, ...query })).map((e) => e.at - t0)
      expect(await times({ since: t0 + 7000 })).toEqual([7000, 8000, 9000])
      expect(await times({ limit: 2 })).toEqual([8000, 9000])
      expect(await times({ since: t0 + 2000, limit: 20 })).toHaveLength(8)
      expect(await times({ since: t0 + 10_000 })).toEqual([])
      expect(await stores.audit.list({ userId: '1000000001' })).toEqual([])
    })

    it('append cuts an over-long client address or request id to 64 characters; appending none is a no-op', async () => {
      const userId = generateUserId()
      await stores.audit.append([])
      await stores.audit.append([
        event({ userId, clientAddress: 'a'.repeat(300), requestId: 'r'.repeat(65) }),
      ])
      const [stored] = await stores.audit.list({ userId })
      expect(stored?.clientAddress).toBe('a'.repeat(64))
      expect(stored?.requestId).toBe('r'.repeat(64))
    })

    it('append keeps any text as it was sent: quotes, commas, braces, backslashes, NULL, non-ASCII', async () => {
      const userId = generateUserId()
      // a forwarded address is whatever a trusted proxy passed on; PostgreSQL's batch travels as array literals
      const texts = ['a,"b"\\{c}', 'NULL', '', ' ', 'é∂😀', "it's"]
      await stores.audit.append(
        texts.map((text, i) => event({ userId, at: Date.now() + i, clientAddress: text, requestId: text })),
      )
      const stored = await stores.audit.list({ userId })
      expect(stored.map((e) => e.clientAddress)).toEqual(texts)
      expect(stored.map((e) => e.requestId)).toEqual(texts)
    })

    it('prune deletes the events before the time only, in batches, and says how many', async () => {
      const userId = generateUserId()
      // far in the past, so that the other tests' events are not pruned
      const t0 = 1_000_000
      await stores.audit.append(Array.from({ length: 1_203 }, (_, i) => event({ userId, at: t0 + i })))
      expect(await stores.audit.prune(t0 + 1_200)).toBe(1_200)
      expect((await stores.audit.list({ userId })).map((e) => e.at - t0)).toEqual([1_200, 1_201, 1_202])
      expect(await stores.audit.prune(t0 + 1_200)).toBe(0)
    })

    it("eraseClientAddresses nulls the user's addresses only and keeps the events", async () => {
      const userId = generateUserId()
      const other = generateUserId()
      await stores.audit.append([
        event({ userId }),
        event({ userId, clientAddress: null }),
        event({ userId, type: 'logout' }),
        event({ userId: other }),
      ])
      expect(await stores.audit.eraseClientAddresses(userId)).toBe(2)
      const kept = await stores.audit.list({ userId })
      expect(kept.map((e) => [e.type, e.clientAddress, e.requestId])).toEqual([
        ['login_succeeded', null, 'req-1'],
        ['login_succeeded', null, 'req-1'],
        ['logout', null, 'req-1'],
      ])
      expect((await stores.audit.list({ userId: other }))[0]?.clientAddress).toBe('203.0.113.7')
      expect(await stores.audit.eraseClientAddresses(userId)).toBe(0)
    })
  })

  describe('probes', () => {
    it('every probe answers', async () => {
      expect(Object.keys(stores.probes)).toContain('database')
      for (const probe of Object.values(stores.probes)) await expect(probe()).resolves.toBeUndefined()
    })
  })
})
