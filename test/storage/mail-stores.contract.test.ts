import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { generateUserId } from '../../src/auth/user-id.js'
import { CODES_PER_KEY, type CodeKey, type OutboxMessage, type Stores } from '../../src/storage/stores.js'
import { backends } from '../support/backends.js'
import { useContractStores } from './contract-setup.js'

/**
 * The contract of the stores of issue 21 (migration 0005) on every backend, against real servers: the e-mail codes
 * and the outbox, always in the SQL database, and the shared counters, in Redis when it is set, else in SQL.
 */
describe.each(backends)('mail storage contract [$name]', (backend) => {
  let stores: Stores
  useContractStores(backend, (opened) => {
    stores = opened.stores
  })

  let serial = 0
  const address = () => `mail-${Date.now()}-${serial++}@example.com`
  const digest = (n: number) => n.toString(16).padStart(64, '0')

  describe('EmailCodeStore', () => {
    const codeKey = (overrides: Partial<CodeKey> = {}): CodeKey => ({
      address: address(),
      purpose: 'login',
      userId: null,
      ...overrides,
    })
    const inTenMinutes = () => Date.now() + 600_000
    /** Puts a code good for ten minutes, as the service does: sent now. */
    const put = (key: CodeKey, n: number, expiresAt = inTenMinutes()) =>
      stores.codes.put(key, digest(n), expiresAt, Date.now())
    const take = (key: CodeKey, n: number, maxTries = 5) =>
      stores.codes.take(key, digest(n), Date.now(), maxTries)

    it('take with the right digest: true once, then the code is used up', async () => {
      const key = codeKey()
      await put(key, 1)
      expect(await take(key, 1)).toBe(true)
      expect(await take(key, 1)).toBe(false)
      expect(await take(codeKey(), 1)).toBe(false)
    })

    it('each wrong digest uses a try: after maxTries of them the right one is refused too', async () => {
      const key = codeKey()
      await put(key, 1)
      for (let i = 0; i < 3; i++) expect(await take(key, 2, 3)).toBe(false)
      expect(await take(key, 1, 3)).toBe(false)
      // with a try left, the right one is taken
      const other = codeKey()
      await put(other, 1)
      for (let i = 0; i < 2; i++) expect(await take(other, 2, 3)).toBe(false)
      expect(await take(other, 1, 3)).toBe(true)
    })

    it("R4.14.2 a new code leaves the key's earlier ones good, each with its own tries", async () => {
      const key = codeKey()
      await put(key, 1)
      for (let i = 0; i < 3; i++) expect(await take(key, 9, 3)).toBe(false)
      // the first is out of tries; the second starts with every try, and the first stays out of them
      await put(key, 2)
      expect(await take(key, 1, 3)).toBe(false)
      expect(await take(key, 2, 3)).toBe(true)
      // a code sent after another does not stop it from working
      const again = codeKey()
      await put(again, 1)
      await put(again, 2)
      await put(again, 3)
      expect(await take(again, 1)).toBe(true)
    })

    it('R4.14.2 a right code uses up every code of its key, and only of its key', async () => {
      const key = codeKey()
      const other = { ...key, purpose: 'reset_password' as const }
      for (const n of [1, 2, 3]) await put(key, n)
      await put(other, 1)
      expect(await take(key, 2)).toBe(true)
      for (const n of [1, 2, 3]) expect(await take(key, n)).toBe(false)
      expect(await take(other, 1)).toBe(true)
    })

    it('R4.14.2 each code expires at its own time; an expired one is refused', async () => {
      const key = codeKey()
      const now = Date.now()
      await stores.codes.put(key, digest(1), now + 1_000, now)
      await stores.codes.put(key, digest(2), now + 60_000, now)
      // at the first's expiry, to the millisecond: the first refused (a wrong try, counted on the second), the second
      // good
      expect(await stores.codes.take(key, digest(1), now + 1_000, 2)).toBe(false)
      expect(await stores.codes.take(key, digest(2), now + 1_000, 2)).toBe(true)
    })

    it('R4.14.3 a wrong try counts on every open code of the key: five of them use up all, four leave each one good', async () => {
      const key = codeKey()
      for (const n of [1, 2, 3]) await put(key, n)
      for (let i = 0; i < 5; i++) expect(await take(key, 9)).toBe(false)
      for (const n of [1, 2, 3]) expect(await take(key, n)).toBe(false)
      for (const right of [1, 2, 3]) {
        const other = codeKey()
        for (const n of [1, 2, 3]) await put(other, n)
        for (let i = 0; i < 4; i++) expect(await take(other, 9)).toBe(false)
        expect(await take(other, right)).toBe(true)
      }
    })

    it(`R4.14.2 a key holds its ${CODES_PER_KEY} newest codes: a code sent past them takes the oldest's place`, async () => {
      const key = codeKey()
      for (let n = 1; n <= CODES_PER_KEY + 1; n++) await put(key, n)
      expect(await take(key, 1)).toBe(false)
      expect(await take(key, 2)).toBe(true)
      // expired codes are dropped first: a live code among them keeps its place
      const other = codeKey()
      const now = Date.now()
      await stores.codes.put(other, digest(1), now + 60_000, now)
      for (let n = 2; n <= CODES_PER_KEY; n++) await stores.codes.put(other, digest(n), now + 10, now)
      await stores.codes.put(other, digest(99), now + 60_000, now + 10)
      expect(await stores.codes.take(other, digest(1), now + 10, 5)).toBe(true)
    })

    it('a key is pruned when its last code has expired, to the millisecond, and not before', async () => {
      const key = codeKey()
      // far in the past, so that no other test's code is due for pruning
      const sentAt = 1_000_000
      await stores.codes.put(key, digest(1), 2_000_000, sentAt)
      await stores.codes.put(key, digest(2), 2_000_100, sentAt)
      expect(await stores.codes.take(key, digest(1), 2_000_000, 5)).toBe(false)
      expect(await stores.codes.prune(2_000_099)).toBe(0)
      expect(await stores.codes.prune(2_000_100)).toBe(1)
      expect(await stores.codes.take(key, digest(2), 2_000_099, 5)).toBe(false)
      // the key is gone with its tries: the same code put again has every try
      await put(key, 1)
      expect(await take(key, 1, 1)).toBe(true)
    })

    it('keys differ by address, purpose and account, and an address is normalized by the caller only', async () => {
      const userId = generateUserId()
      const base = codeKey()
      const keys = [
        base,
        { ...base, purpose: 'register' as const },
        { ...base, purpose: 'change_email' as const, userId },
        { ...base, purpose: 'change_email' as const, userId: generateUserId() },
        { ...base, address: base.address.toUpperCase() },
      ]
      await Promise.all(keys.map((key, i) => put(key, i)))
      for (const [i, key] of keys.entries()) {
        expect(await take(key, i + 1)).toBe(false)
        expect(await take(key, i)).toBe(true)
      }
    })

    it('of 20 concurrent wrong takes at most maxTries are counted', async () => {
      const key = codeKey()
      await put(key, 1)
      const results = await Promise.all(Array.from({ length: 20 }, () => take(key, 2)))
      expect(results.filter(Boolean)).toEqual([])
      // exactly five were counted: the code has no try left under 5, and one under 6
      expect(await take(key, 1)).toBe(false)
      expect(await take(key, 1, 6)).toBe(true)
    })

    it('R4.14.3 of 20 concurrent wrong takes at a key of three codes, exactly maxTries are counted on each', async () => {
      const key = codeKey()
      for (const n of [1, 2, 3]) await put(key, n)
      const results = await Promise.all(Array.from({ length: 20 }, () => take(key, 9)))
      expect(results.filter(Boolean)).toEqual([])
      expect(await take(key, 1)).toBe(false)
      // a sixth wrong try under 6 counts on each, then none is left under 6, and one under 7: each had five, the
      // first code as the last
      expect(await take(key, 9, 6)).toBe(false)
      expect(await take(key, 2, 6)).toBe(false)
      expect(await take(key, 1, 7)).toBe(true)
    })

    it('of 20 concurrent takes, the right one among them, at most one is true; of right ones exactly one', async () => {
      const key = codeKey()
      await put(key, 1)
      const mixed = await Promise.all(Array.from({ length: 20 }, (_, i) => take(key, i % 4 === 0 ? 1 : 2, 3)))
      expect(mixed.filter(Boolean).length).toBeLessThanOrEqual(1)

      const again = codeKey()
      await put(again, 1)
      const right = await Promise.all(Array.from({ length: 20 }, () => take(again, 1, 3)))
      expect(right.filter(Boolean)).toHaveLength(1)
    })

    it('R4.14.2 of 21 concurrent takes with the three codes of a key, exactly one is true, and the key is used up', async () => {
      const key = codeKey()
      for (const n of [1, 2, 3]) await put(key, n)
      const right = await Promise.all(Array.from({ length: 21 }, (_, i) => take(key, 1 + (i % 3))))
      expect(right.filter(Boolean)).toHaveLength(1)
      for (const n of [1, 2, 3]) expect(await take(key, n)).toBe(false)
      // with wrong ones among them: at most one
      const mixed = codeKey()
      for (const n of [1, 2, 3]) await put(mixed, n)
      const results = await Promise.all(
        Array.from({ length: 21 }, (_, i) => take(mixed, i % 7 === 0 ? 2 : 9)),
      )
      expect(results.filter(Boolean).length).toBeLessThanOrEqual(1)
    })

    it('R4.14.2 of five codes sent at once to one key, every one is kept', async () => {
      for (const n of [1, 2, 3, 4, 5]) {
        const key = codeKey()
        await Promise.all([1, 2, 3, 4, 5].map((sent) => put(key, sent)))
        expect(await take(key, n)).toBe(true)
      }
    })

    describe('reset keys (R4.14.2, R8.9)', () => {
      const resetKey = (n: number) => (1000 + n).toString(16).padStart(64, 'e')
      /** Puts code `n` of a reset, with reset key `n`, as the service does. */
      const putReset = (key: CodeKey, n: number, expiresAt = inTenMinutes(), now = Date.now()) =>
        stores.codes.put(key, digest(n), expiresAt, now, resetKey(n))
      const takeKey = (key: CodeKey, n: number, now = Date.now()) =>
        stores.codes.takeResetKey(key, resetKey(n), now)
      const resetCodeKey = () => codeKey({ purpose: 'reset_password' })

      it('the right reset key: true once, and every code and reset key of the key is used up with it', async () => {
        const key = resetCodeKey()
        for (const n of [1, 2, 3]) await putReset(key, n)
        const other = resetCodeKey()
        await putReset(other, 1)
        expect(await takeKey(key, 2)).toBe(true)
        expect(await takeKey(key, 2)).toBe(false)
        for (const n of [1, 2, 3]) {
          expect(await takeKey(key, n)).toBe(false)
          expect(await take(key, n)).toBe(false)
        }
        // another address's reset is another key
        expect(await takeKey(other, 1)).toBe(true)
      })

      it('a wrong reset key changes nothing: after 100 of them each code has every try and each reset key works', async () => {
        const key = resetCodeKey()
        for (const n of [1, 2]) await putReset(key, n)
        for (let i = 0; i < 100; i++) expect(await takeKey(key, 9)).toBe(false)
        // the code's five tries are all there: four wrong ones leave it good
        for (let i = 0; i < 4; i++) expect(await take(key, 9)).toBe(false)
        expect(await take(key, 1)).toBe(true)
        const again = resetCodeKey()
        await putReset(again, 1)
        for (let i = 0; i < 100; i++) expect(await takeKey(again, 9)).toBe(false)
        expect(await takeKey(again, 1)).toBe(true)
      })

      it('wrong tries that use up every code leave each reset key good; a code is never a reset key, nor one a code', async () => {
        const key = resetCodeKey()
        for (const n of [1, 2, 3]) await putReset(key, n)
        for (let i = 0; i < 5; i++) expect(await take(key, 9)).toBe(false)
        for (const n of [1, 2, 3]) expect(await take(key, n)).toBe(false)
        // a code's digest given as a reset key, and a reset key's as a code, are refused
        expect(await stores.codes.takeResetKey(key, digest(1), Date.now())).toBe(false)
        expect(await stores.codes.take(key, resetKey(1), Date.now(), 5)).toBe(false)
        expect(await takeKey(key, 3)).toBe(true)
        expect(await takeKey(key, 1)).toBe(false)
      })

      it('a reset key expires with its code, to the millisecond; a code without one has none', async () => {
        const key = resetCodeKey()
        const now = Date.now()
        await putReset(key, 1, now + 1_000, now)
        await stores.codes.put(key, digest(2), now + 60_000, now)
        expect(await takeKey(key, 1, now + 1_000)).toBe(false)
        expect(await takeKey(key, 1, now + 999)).toBe(true)
        // the code put without a reset key: no reset key opens it, its own code does
        const plain = resetCodeKey()
        await stores.codes.put(plain, digest(1), now + 60_000, now)
        expect(await stores.codes.takeResetKey(plain, digest(1), now)).toBe(false)
        expect(await take(plain, 1)).toBe(true)
      })

      it('a key whose codes carry reset keys keeps its newest that fit the row: at least six, the newest always', async () => {
        const key = resetCodeKey()
        for (let n = 1; n <= CODES_PER_KEY + 1; n++) await putReset(key, n)
        const kept: number[] = []
        for (let n = CODES_PER_KEY + 1; n >= 1; n--) {
          const other = resetCodeKey()
          for (let m = 1; m <= CODES_PER_KEY + 1; m++) await putReset(other, m)
          if (await takeKey(other, n)) kept.push(n)
        }
        // the newest ones, without a gap
        expect(kept.length).toBeGreaterThanOrEqual(6)
        expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => CODES_PER_KEY + 1 - i))
        expect(await takeKey(key, CODES_PER_KEY + 1)).toBe(true)
      })

      it('of 20 concurrent tries with the right reset key, a right code and wrong keys, exactly one is true', async () => {
        const key = resetCodeKey()
        for (const n of [1, 2]) await putReset(key, n)
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            i % 5 === 0 ? takeKey(key, 1) : i % 5 === 1 ? take(key, 2) : takeKey(key, 9),
          ),
        )
        expect(results.filter(Boolean)).toHaveLength(1)
        expect(await takeKey(key, 2)).toBe(false)
      })
    })

    it("deleteFor removes the account's codes and those sent to the address, no other", async () => {
      const userId = generateUserId()
      const mine = codeKey({ purpose: 'verify_email', userId })
      const toAddress = codeKey()
      const kept = [codeKey(), codeKey({ purpose: 'delete_account', userId: generateUserId() })]
      for (const key of [mine, toAddress, ...kept]) await put(key, 1)
      await stores.codes.deleteFor(userId, toAddress.address)
      expect(await take(mine, 1)).toBe(false)
      expect(await take(toAddress, 1)).toBe(false)
      for (const key of kept) expect(await take(key, 1)).toBe(true)
    })
  })

  describe('OutboxStore', () => {
    /** Every message of these tests is about this account, so that each test removes what it left behind. */
    const userId = generateUserId()
    afterEach(async () => {
      await stores.outbox.deleteFor(userId, 'nobody@example.invalid')
    })

    const id = () => randomBytes(16).toString('hex')
    const claimant = () => randomBytes(16).toString('hex')
    const queued = async (createdAt: number, overrides: Partial<OutboxMessage> = {}) => {
      const message = {
        id: id(),
        lane: 'mail' as const,
        userId,
        recipient: address(),
        payload: `sealed.${randomBytes(24).toString('base64url')}`,
        createdAt,
        codeExpiresAt: null as number | null,
        ...overrides,
      }
      await stores.outbox.enqueue(message)
      return { ...message, attempts: 0, nextAttemptAt: createdAt }
    }

    it('enqueue, claim, remove: every field back, the longest waiting first, at most the limit', async () => {
      const t0 = Date.now()
      const messages = [
        await queued(t0 - 2_000, { payload: 'x'.repeat(8192) }),
        await queued(t0 - 3_000),
        await queued(t0 - 1_000, { userId: null, recipient: `nobody-${serial++}@example.com` }),
      ]
      const holder = claimant()
      const first = await stores.outbox.claim('mail', holder, t0, t0 + 60_000, 2)
      expect(first).toEqual([messages[1], messages[0]])
      // held: no other claim gets them while the lease runs
      expect(await stores.outbox.claim('mail', claimant(), t0 + 59_999, t0 + 120_000, 10)).toEqual([
        messages[2],
      ])
      await stores.outbox.deleteFor('', messages[2]?.recipient as string)
      expect(await stores.outbox.remove(messages[1]?.id as string, holder)).toBe(true)
      expect(await stores.outbox.remove(messages[1]?.id as string, holder)).toBe(false)
      expect(await stores.outbox.remove(messages[0]?.id as string, claimant())).toBe(false)
      expect(await stores.outbox.remove(messages[0]?.id as string, holder)).toBe(true)
      expect(await stores.outbox.claim('mail', claimant(), t0 + 1_000_000, t0 + 2_000_000, 10)).toEqual([])
    })

    it('claim order: what is not a code first, the longest due first; then the codes, the latest expiry first', async () => {
      const t0 = Date.now()
      const expired = await queued(t0 - 5_000, { codeExpiresAt: t0 - 1 })
      const oldNotice = await queued(t0 - 3_000)
      const olderCode = await queued(t0 - 2_000, { codeExpiresAt: t0 + 598_000 })
      const newerCode = await queued(t0 - 1_000, { codeExpiresAt: t0 + 599_000 })
      const newNotice = await queued(t0 - 500)
      const holder = claimant()
      // the limit is taken from the front of that order: both notices, then the newest code
      expect(await stores.outbox.claim('mail', holder, t0, t0 + 60_000, 3)).toEqual([
        oldNotice,
        newNotice,
        newerCode,
      ])
      expect(await stores.outbox.claim('mail', claimant(), t0, t0 + 60_000, 1)).toEqual([olderCode])
      // an expired code is claimed too, last (the sender drops it)
      expect(await stores.outbox.claim('mail', claimant(), t0, t0 + 60_000, 10)).toEqual([expired])
      // a code not yet due waits, whatever its expiry; the notice due first goes first
      await stores.outbox.failed(newerCode.id, holder, t0 + 30_000)
      await stores.outbox.release([oldNotice.id, newNotice.id], holder)
      expect(await stores.outbox.claim('mail', claimant(), t0, t0 + 60_000, 10)).toEqual([
        oldNotice,
        newNotice,
      ])
      expect(await stores.outbox.claim('mail', claimant(), t0 + 30_000, t0 + 90_000, 10)).toEqual([
        { ...newerCode, attempts: 1, nextAttemptAt: t0 + 30_000 },
      ])
    })

    it('renew extends the lease of what the claimant still holds, and says which', async () => {
      const t0 = Date.now()
      const [takenOver, kept, failed, removed] = [
        await queued(t0 - 4_000),
        await queued(t0 - 3_000),
        await queued(t0 - 2_000),
        await queued(t0 - 1_000, { codeExpiresAt: t0 + 600_000 }),
      ]
      const early = claimant()
      expect(await stores.outbox.claim('mail', early, t0, t0 + 5_000, 1)).toEqual([takenOver])
      const holder = claimant()
      expect(await stores.outbox.claim('mail', holder, t0, t0 + 10_000, 3)).toEqual([kept, failed, removed])
      const ids = [kept, failed, removed].map((message) => message.id)
      expect(await stores.outbox.renew([], holder, t0 + 20_000)).toEqual([])
      expect(await stores.outbox.renew(ids, claimant(), t0 + 20_000)).toEqual([])
      expect(await stores.outbox.remove(removed.id, holder)).toBe(true)
      await stores.outbox.failed(failed.id, holder, t0)
      // its lease ended and another claim took it: no longer its first claimant's
      expect(await stores.outbox.claim('mail', claimant(), t0 + 5_000, t0 + 30_000, 10)).toEqual([
        takenOver,
        { ...failed, attempts: 1, nextAttemptAt: t0 },
      ])
      expect(await stores.outbox.renew([takenOver.id], early, t0 + 20_000)).toEqual([])
      expect(await stores.outbox.renew(ids, holder, t0 + 20_000)).toEqual([kept.id])
      // renewed: held past its first lease, free once the renewed one ends
      expect(await stores.outbox.claim('mail', claimant(), t0 + 19_999, t0 + 60_000, 10)).toEqual([])
      expect(await stores.outbox.claim('mail', claimant(), t0 + 20_000, t0 + 60_000, 10)).toEqual([kept])
      // a lease that ended, the message claimed by no one since, is renewed too
      const late = await queued(t0)
      const lateHolder = claimant()
      expect(await stores.outbox.claim('mail', lateHolder, t0, t0 + 1_000, 1)).toEqual([late])
      expect(await stores.outbox.renew([late.id], lateHolder, t0 + 90_000)).toEqual([late.id])
      expect(await stores.outbox.claim('mail', claimant(), t0 + 5_000, t0 + 70_000, 10)).toEqual([])
    })

    it('a message is not claimed before it is due', async () => {
      const t0 = Date.now()
      const message = await queued(t0)
      expect(await stores.outbox.claim('mail', claimant(), t0 - 1, t0 + 60_000, 10)).toEqual([])
      expect(await stores.outbox.claim('mail', claimant(), t0, t0 + 60_000, 10)).toEqual([message])
    })

    it('failed counts the attempt, makes the message due later and releases it; only for its claimant', async () => {
      const t0 = Date.now()
      const message = await queued(t0 - 1_000)
      const holder = claimant()
      await stores.outbox.claim('mail', holder, t0, t0 + 60_000, 10)
      await stores.outbox.failed(message.id, claimant(), t0 + 1)
      expect(await stores.outbox.claim('mail', claimant(), t0 + 30_000, t0 + 60_000, 10)).toEqual([])
      await stores.outbox.failed(message.id, holder, t0 + 30_000)
      // released, but not due before then
      expect(await stores.outbox.claim('mail', claimant(), t0 + 29_999, t0 + 60_000, 10)).toEqual([])
      const next = claimant()
      expect(await stores.outbox.claim('mail', next, t0 + 30_000, t0 + 90_000, 10)).toEqual([
        { ...message, attempts: 1, nextAttemptAt: t0 + 30_000 },
      ])
      // the first claimant no longer holds it
      await stores.outbox.failed(message.id, holder, t0 + 40_000)
      expect(await stores.outbox.remove(message.id, holder)).toBe(false)
      expect(await stores.outbox.remove(message.id, next)).toBe(true)
    })

    it('release: the messages are due again at once, no attempt counted; only for their claimant', async () => {
      const t0 = Date.now()
      const messages = [await queued(t0 - 3_000), await queued(t0 - 2_000), await queued(t0 - 1_000)]
      const holder = claimant()
      expect(await stores.outbox.claim('mail', holder, t0, t0 + 60_000, 10)).toEqual(messages)
      await stores.outbox.release([], holder)
      await stores.outbox.release(
        messages.map((message) => message.id),
        claimant(),
      )
      expect(await stores.outbox.claim('mail', claimant(), t0, t0 + 60_000, 10)).toEqual([])
      await stores.outbox.release([messages[0]?.id as string, messages[2]?.id as string], holder)
      const next = claimant()
      expect(await stores.outbox.claim('mail', next, t0, t0 + 60_000, 10)).toEqual([messages[0], messages[2]])
      expect(await stores.outbox.remove(messages[1]?.id as string, holder)).toBe(true)
    })

    it('a lease that ended can be claimed again; the claimant that lost it can no longer remove it', async () => {
      const t0 = Date.now()
      const message = await queued(t0 - 1_000)
      const first = claimant()
      expect(await stores.outbox.claim('mail', first, t0, t0 + 10_000, 10)).toEqual([message])
      expect(await stores.outbox.claim('mail', claimant(), t0 + 9_999, t0 + 20_000, 10)).toEqual([])
      const second = claimant()
      expect(await stores.outbox.claim('mail', second, t0 + 10_000, t0 + 20_000, 10)).toEqual([message])
      expect(await stores.outbox.remove(message.id, first)).toBe(false)
      expect(await stores.outbox.remove(message.id, second)).toBe(true)
    })

    /** 200 messages, every third a code: the claims race over both orders. */
    const mixed = (t0: number) =>
      Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          queued(t0 - 10_000 + i, { codeExpiresAt: i % 3 === 0 ? t0 + 600_000 + i : null }),
        ),
      )

    it('of two claimers racing over 200 messages, each message goes to exactly one', async () => {
      const t0 = Date.now()
      const messages = await mixed(t0)
      const claimLoop = async () => {
        const mine: OutboxMessage[] = []
        for (;;) {
          const batch = await stores.outbox.claim('mail', claimant(), t0, t0 + 60_000, 15)
          if (batch.length === 0) return mine
          mine.push(...batch)
        }
      }
      const [a, b] = await Promise.all([claimLoop(), claimLoop()])
      const ids = [...(a ?? []), ...(b ?? [])].map((message) => message.id)
      expect(new Set(ids).size).toBe(ids.length)
      expect([...ids].sort()).toEqual(messages.map((message) => message.id).sort())
    })

    it('of 5 concurrent claims of up to 200 messages each, each message goes to exactly one', async () => {
      const t0 = Date.now()
      const messages = await mixed(t0)
      const batches = await Promise.all(
        Array.from({ length: 5 }, () => stores.outbox.claim('mail', claimant(), t0, t0 + 60_000, 200)),
      )
      const ids = batches.flat().map((message) => message.id)
      expect(new Set(ids).size).toBe(ids.length)
      expect([...ids].sort()).toEqual(messages.map((message) => message.id).sort())
    })

    it('deleteFor removes the messages about the account and those to the address; stats counts what waits', async () => {
      const t0 = Date.now()
      const other = generateUserId()
      const about = await queued(t0, { userId: other })
      const to = await queued(t0, { userId: null })
      const kept = await queued(t0)
      const before = await stores.outbox.stats('mail')
      expect(before.queued).toBeGreaterThanOrEqual(3)
      expect(before.oldestCreatedAt).toBeLessThanOrEqual(t0)
      expect(await stores.outbox.deleteFor(other, to.recipient)).toBe(2)
      expect(await stores.outbox.deleteFor(other, to.recipient)).toBe(0)
      expect((await stores.outbox.stats('mail')).queued).toBe(before.queued - 2)
      const holder = claimant()
      expect(await stores.outbox.claim('mail', holder, t0, t0 + 60_000, 10)).toEqual([kept])
      expect(await stores.outbox.remove(about.id, holder)).toBe(false)
    })

    it('stats: none queued, no oldest', async () => {
      const { queued: count, oldestCreatedAt } = await stores.outbox.stats('mail')
      expect(count).toBe(0)
      expect(oldestCreatedAt).toBeNull()
      const message = await queued(1_000_000)
      expect(await stores.outbox.stats('mail')).toEqual({ queued: 1, oldestCreatedAt: message.createdAt })
    })
  })

  describe('shared counters', () => {
    const counterKey = () => `contract:${Date.now()}:${serial++}`

    it('counts the hits of a window, then starts again at 1 when it has ended', async () => {
      const key = counterKey()
      // long enough for two hits on a loaded machine, short enough to wait for its end
      const windowMs = 1_500
      const first = await stores.sharedCounters.increment(key, windowMs)
      expect(first.count).toBe(1)
      expect(first.resetAfterMs).toBeGreaterThan(0)
      expect(first.resetAfterMs).toBeLessThanOrEqual(windowMs)
      const second = await stores.sharedCounters.increment(key, windowMs)
      expect(second.count).toBe(2)
      expect(second.resetAfterMs).toBeLessThanOrEqual(first.resetAfterMs)
      expect((await stores.sharedCounters.increment(counterKey(), windowMs)).count).toBe(1)
      await sleep(windowMs + 100)
      const restarted = await stores.sharedCounters.increment(key, 60_000)
      expect(restarted.count).toBe(1)
      expect(restarted.resetAfterMs).toBeGreaterThan(59_000)
      expect(restarted.resetAfterMs).toBeLessThanOrEqual(60_000)
      expect((await stores.sharedCounters.increment(key, 60_000)).count).toBe(2)
    })

    it('of 50 concurrent hits on one key each gets its own count', async () => {
      const key = counterKey()
      const counts = await Promise.all(
        Array.from({ length: 50 }, () => stores.sharedCounters.increment(key, 60_000)),
      )
      expect(counts.map((count) => count.count).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 50 }, (_, i) => i + 1),
      )
      for (const { resetAfterMs } of counts) {
        expect(resetAfterMs).toBeGreaterThan(50_000)
        expect(resetAfterMs).toBeLessThanOrEqual(60_000)
      }
    })

    it('counts a key of any length and any text, each apart', async () => {
      const long = `${counterKey()}:${'é'.repeat(400)}`
      expect((await stores.sharedCounters.increment(long, 60_000)).count).toBe(1)
      expect((await stores.sharedCounters.increment(long, 60_000)).count).toBe(2)
      expect((await stores.sharedCounters.increment(`${long}x`, 60_000)).count).toBe(1)
      const quoted = `${counterKey()}:it's "quoted"`
      expect((await stores.sharedCounters.increment(quoted, 60_000)).count).toBe(1)
    })

    it.skipIf(backend.redis)(
      'in SQL, prune removes the windows that have ended, and only those',
      async () => {
        const prune = stores.sharedCounters.prune
        if (prune === undefined) throw new Error('the SQL counters have no prune')
        // the windows earlier tests left go first (as if an hour had passed), so that the count below is this test's own
        await prune.call(stores.sharedCounters, Date.now() + 3_600_000)
        const ended = counterKey()
        const running = counterKey()
        await stores.sharedCounters.increment(ended, 1)
        await stores.sharedCounters.increment(running, 60_000)
        await sleep(5)
        // one row removed, and not the running one (it counts on): the ended one
        expect(await prune.call(stores.sharedCounters, Date.now())).toBe(1)
        expect(await prune.call(stores.sharedCounters, Date.now())).toBe(0)
        expect((await stores.sharedCounters.increment(running, 60_000)).count).toBe(2)
        expect((await stores.sharedCounters.increment(ended, 60_000)).count).toBe(1)
      },
    )
  })
})
