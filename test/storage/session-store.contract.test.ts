import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { SessionRotation, StoredSession, Stores } from '../../src/storage/stores.js'
import { backends } from '../support/backends.js'
import { contractAccounts, useContractStores } from './contract-setup.js'

const MINUTE = 60_000
const HOUR = 3_600_000

/**
 * The SessionStore contract of issue 32 on every backend, against real servers (the rest of it is in
 * stores.contract.test.ts): the second-factor flag (StoredSession.secondFactor, markSecondFactor; migration 0010)
 * and the absolute lifetime a rotation enforces (SessionRotation.lifetimeMs, AUTH_SESSION_LIFETIME_DAYS).
 */
describe.each(backends)('session store contract: second factor and lifetime [$name]', (backend) => {
  let stores: Stores
  useContractStores(backend, (opened) => {
    stores = opened.stores
  })

  const { created } = contractAccounts('session-contract', () => stores)
  const ROUNDS = Number(process.env.ROUNDS ?? 5)
  const digest = (n: number) => n.toString(16).padStart(64, '0')
  /** Starts a session of `userId` whose current token has digest(n), started now, valid for an hour; resolves with it. */
  const started = async (userId: string, n: number, overrides: Partial<StoredSession> = {}) => {
    const now = Date.now()
    const session: StoredSession = {
      id: randomBytes(16).toString('hex'),
      userId,
      digest: digest(n),
      expiresAt: now + HOUR,
      createdAt: now,
      lastUsedAt: now,
      device: 'Firefox on Linux',
      clientAddress: '203.0.113.0/24',
      previousDigest: null,
      rotatedAt: null,
      secondFactor: false,
      ...overrides,
    }
    expect(await stores.sessions.start(session, 10, now)).toBe(true)
    return session
  }
  /** The rotation to digest(to), expiring at `expiresAt`, with the lifetime `lifetimeMs`. */
  const successor = (to: number, expiresAt: number, lifetimeMs: number | null): SessionRotation => ({
    digest: digest(to),
    expiresAt,
    clientAddress: null,
    lifetimeMs,
  })
  const find = (userId: string, id: string, now = Date.now()) => stores.sessions.find(userId, { id }, now)

  describe('the second-factor flag', () => {
    it('start stores it; find and list return it; a rotation keeps it', async () => {
      const user = await created()
      const withFactor = await started(user.id, 1, { secondFactor: true })
      const without = await started(user.id, 2)
      expect(await find(user.id, withFactor.id)).toEqual(withFactor)
      expect(await find(user.id, without.id)).toEqual(without)
      expect(await stores.sessions.find(user.id, { digest: digest(1) }, Date.now())).toEqual(withFactor)
      const listed = await stores.sessions.list(user.id, Date.now())
      expect(listed.map((session) => [session.id, session.secondFactor]).sort()).toEqual(
        [
          [withFactor.id, true],
          [without.id, false],
        ].sort(),
      )
      const now = Date.now()
      expect(await stores.sessions.rotate(user.id, digest(1), successor(3, now + HOUR, null), now)).toBe(true)
      expect(await stores.sessions.rotate(user.id, digest(2), successor(4, now + HOUR, null), now)).toBe(true)
      expect(await find(user.id, withFactor.id, now)).toMatchObject({ digest: digest(3), secondFactor: true })
      expect(await find(user.id, without.id, now)).toMatchObject({ digest: digest(4), secondFactor: false })
      expect(await stores.sessions.find(user.id, { previousDigest: digest(1) }, now)).toMatchObject({
        id: withFactor.id,
        secondFactor: true,
      })
    })

    it('markSecondFactor sets it and nothing else; true whenever the user has the session, set or not', async () => {
      const user = await created()
      const marked = await started(user.id, 1)
      const beside = await started(user.id, 2)
      expect(await stores.sessions.markSecondFactor(user.id, marked.id, Date.now())).toBe(true)
      expect(await find(user.id, marked.id)).toEqual({ ...marked, secondFactor: true })
      expect(await find(user.id, beside.id)).toEqual(beside)
      // already set: still the user's session (MySQL counts the row it matched, not only one it changed)
      expect(await stores.sessions.markSecondFactor(user.id, marked.id, Date.now())).toBe(true)
      expect(await find(user.id, marked.id)).toEqual({ ...marked, secondFactor: true })
      // and kept by a rotation, however many
      const now = Date.now()
      expect(await stores.sessions.rotate(user.id, digest(1), successor(3, now + HOUR, null), now)).toBe(true)
      expect(await stores.sessions.rotate(user.id, digest(3), successor(5, now + HOUR, null), now)).toBe(true)
      expect(await find(user.id, marked.id, now)).toMatchObject({ digest: digest(5), secondFactor: true })
    })

    it("markSecondFactor is false for an unknown id, another user's session, an expired or an ended one", async () => {
      const user = await created()
      const other = await created()
      const theirs = await started(other.id, 1)
      expect(await stores.sessions.markSecondFactor(user.id, theirs.id, Date.now())).toBe(false)
      expect(await find(other.id, theirs.id)).toEqual(theirs)
      expect(
        await stores.sessions.markSecondFactor(user.id, randomBytes(16).toString('hex'), Date.now()),
      ).toBe(false)
      const expiresAt = Date.now() + MINUTE
      const expiring = await started(user.id, 2, { expiresAt })
      expect(await stores.sessions.markSecondFactor(user.id, expiring.id, expiresAt)).toBe(false)
      expect(await find(user.id, expiring.id, expiresAt - 1)).toEqual(expiring)
      expect(await stores.sessions.markSecondFactor(user.id, expiring.id, expiresAt - 1)).toBe(true)
      const ended = await started(user.id, 3)
      expect(await stores.sessions.end(user.id, ended.id, Date.now())).toBe(true)
      expect(await stores.sessions.markSecondFactor(user.id, ended.id, Date.now())).toBe(false)
      expect(await stores.sessions.list(user.id, Date.now())).toHaveLength(1)
    })

    it('a mark and a rotation at once: both take effect, whichever runs first', async () => {
      const user = await created()
      for (let round = 0; round < ROUNDS; round++) {
        const from = 100 + 2 * round
        const session = await started(user.id, from)
        const now = Date.now()
        const [markedIt, rotatedIt] = await Promise.all([
          stores.sessions.markSecondFactor(user.id, session.id, now),
          stores.sessions.rotate(user.id, digest(from), successor(from + 1, now + HOUR, null), now),
        ])
        expect([markedIt, rotatedIt]).toEqual([true, true])
        expect(await find(user.id, session.id, now)).toMatchObject({
          digest: digest(from + 1),
          previousDigest: digest(from),
          secondFactor: true,
        })
      }
    })
  })

  describe('the absolute lifetime of a rotation', () => {
    it('caps the successor’s expiry at the session’s start + lifetime; an earlier expiry stays', async () => {
      const user = await created()
      const now = Date.now()
      const createdAt = now - 10 * MINUTE
      const session = await started(user.id, 1, { createdAt, lastUsedAt: createdAt })
      // the lifetime ends in 20 minutes, before the successor's hour
      const lifetimeMs = 30 * MINUTE
      expect(
        await stores.sessions.rotate(user.id, digest(1), successor(2, now + HOUR, lifetimeMs), now),
      ).toBe(true)
      expect(await find(user.id, session.id, now)).toEqual({
        ...session,
        digest: digest(2),
        expiresAt: createdAt + lifetimeMs,
        lastUsedAt: now,
        clientAddress: null,
        previousDigest: digest(1),
        rotatedAt: now,
      })
      // a successor that expires before the lifetime ends keeps its own expiry
      const later = now + 1
      expect(
        await stores.sessions.rotate(user.id, digest(2), successor(3, now + 5 * MINUTE, lifetimeMs), later),
      ).toBe(true)
      expect(await find(user.id, session.id, later)).toMatchObject({
        digest: digest(3),
        expiresAt: now + 5 * MINUTE,
        createdAt,
      })
    })

    it('refuses, from the millisecond its lifetime ends, a session whose token has not expired; without one it rotates', async () => {
      const user = await created()
      // the service clock an hour ahead of Redis's, so that no expiry below is reached by Redis's own clock
      const now = Date.now() + HOUR
      // started before the lifetime was set: its stored expiry, an hour on, says nothing of it
      const createdAt = now - 2 * HOUR
      const expiresAt = now + HOUR
      const session = await started(user.id, 1, { createdAt, lastUsedAt: now - MINUTE, expiresAt })
      const lifetimeMs = now - createdAt
      // ended at now exactly: refused, and the session is left as it was
      expect(
        await stores.sessions.rotate(user.id, digest(1), successor(2, now + HOUR, lifetimeMs), now),
      ).toBe(false)
      expect(await stores.sessions.find(user.id, { digest: digest(1) }, now)).toEqual(session)
      // ended long ago
      expect(await stores.sessions.rotate(user.id, digest(1), successor(2, now + HOUR, HOUR), now)).toBe(
        false,
      )
      // a millisecond more of lifetime: rotated, and expiring at that millisecond
      expect(
        await stores.sessions.rotate(user.id, digest(1), successor(2, now + HOUR, lifetimeMs + 1), now),
      ).toBe(true)
      expect(await find(user.id, session.id, now)).toMatchObject({ digest: digest(2), expiresAt: now + 1 })
      expect(await find(user.id, session.id, now + 1)).toBeNull()
      expect(await stores.sessions.rotate(user.id, digest(2), successor(3, now + HOUR, null), now + 1)).toBe(
        false,
      )

      // no lifetime: the session of the same age rotates as it always has
      const unbounded = await started(user.id, 10, { createdAt, lastUsedAt: now - MINUTE, expiresAt })
      expect(await stores.sessions.rotate(user.id, digest(10), successor(11, now + HOUR, null), now)).toBe(
        true,
      )
      expect(await find(user.id, unbounded.id, now)).toMatchObject({
        digest: digest(11),
        expiresAt: now + HOUR,
      })
    })

    it('of 20 concurrent rotations from one digest within the lifetime exactly one succeeds, capped', async () => {
      const user = await created()
      const now = Date.now()
      const createdAt = now - MINUTE
      const session = await started(user.id, 1, { createdAt })
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          stores.sessions.rotate(user.id, digest(1), successor(100 + i, now + HOUR, 2 * MINUTE), now),
        ),
      )
      expect(results.filter(Boolean)).toHaveLength(1)
      expect(await find(user.id, session.id, now)).toMatchObject({
        digest: digest(100 + results.indexOf(true)),
        expiresAt: createdAt + 2 * MINUTE,
      })
    })
  })
})
