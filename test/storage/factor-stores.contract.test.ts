import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { generateUserId } from '../../src/auth/user-id.js'
import { StorageError } from '../../src/errors.js'
import type { StoredFactor, Stores } from '../../src/storage/stores.js'
import { backends } from '../support/backends.js'
import { contractAccounts, useContractStores } from './contract-setup.js'

/**
 * The contract of the stores of issue 32 (migration 0009) on every backend, against real servers: the second factors,
 * the recovery codes and the service keys, all in the SQL database whatever REDIS_URL says. The one-time rules are
 * each tried with concurrent calls, as many processes would make them.
 */
describe.each(backends)('second factor storage contract [$name]', (backend) => {
  let stores: Stores
  useContractStores(backend, (opened) => {
    stores = opened.stores
  })

  const ROUNDS = Number(process.env.ROUNDS ?? 5)
  const CONCURRENT = 20
  const { created } = contractAccounts('factors', () => stores)
  const hexId = () => randomBytes(16).toString('hex')
  const digest = () => randomBytes(32).toString('hex')
  const base64url = (bytes: number) => randomBytes(bytes).toString('base64url')
  const all = <T>(count: number, make: (index: number) => Promise<T>) =>
    Promise.all(Array.from({ length: count }, (_, index) => make(index)))
  const trueCount = (results: readonly boolean[]) => results.filter((result) => result).length

  const newTotp = (userId: string, overrides: Partial<StoredFactor> = {}): StoredFactor => ({
    id: hexId(),
    userId,
    type: 'totp',
    name: 'Authenticator app',
    confirmed: false,
    secret: `v1.${base64url(48)}`,
    lastStep: null,
    credentialId: null,
    publicKey: null,
    counter: 0,
    backedUp: false,
    transports: [],
    createdAt: Date.now(),
    lastUsedAt: null,
    ...overrides,
  })
  const newPasskey = (userId: string, overrides: Partial<StoredFactor> = {}): StoredFactor => ({
    id: hexId(),
    userId,
    type: 'passkey',
    name: 'MacBook Touch ID',
    confirmed: true,
    secret: null,
    lastStep: null,
    credentialId: base64url(32),
    publicKey: base64url(77),
    counter: 0,
    backedUp: true,
    transports: ['internal', 'hybrid'],
    createdAt: Date.now(),
    lastUsedAt: null,
    ...overrides,
  })
  /** An account with a confirmed TOTP factor (its step `step`), and the factor as stored. */
  const withConfirmedTotp = async (step = 1_000) => {
    const user = await created()
    const factor = newTotp(user.id)
    expect(await stores.factors.add(factor)).toBe('added')
    expect(await stores.factors.confirm(user.id, factor.id, step, factor.createdAt + 1)).toBe(true)
    return {
      user,
      factor: { ...factor, confirmed: true, lastStep: step, lastUsedAt: factor.createdAt + 1 },
    }
  }

  describe('FactorStore: factors', () => {
    it('add, then list: both kinds read back exactly, oldest first (createdAt, then id)', async () => {
      const user = await created()
      const at = Date.now()
      const [low, high] = [hexId(), hexId()].sort()
      const totp = newTotp(user.id, { id: high as string, createdAt: at })
      const passkey = newPasskey(user.id, {
        id: low as string,
        createdAt: at,
        lastUsedAt: at + 5,
        counter: 7,
      })
      const oldest = newPasskey(user.id, { createdAt: at - 1, backedUp: false, transports: [] })
      for (const factor of [totp, passkey, oldest]) expect(await stores.factors.add(factor)).toBe('added')
      expect(await stores.factors.list(user.id)).toEqual([oldest, passkey, totp])
      expect(await stores.factors.list(generateUserId())).toEqual([])
    })

    it('the longest values round-trip: a name of 64 characters, a secret of 512, a credential of 1,366, a key of 2,048', async () => {
      const user = await created()
      // characters outside the BMP: two UTF-16 units, four UTF-8 bytes, one character everywhere
      const name = `${'é'.repeat(62)}🔑ß`
      expect([...name]).toHaveLength(64)
      const totp = newTotp(user.id, { name, secret: 's'.repeat(512) })
      const passkey = newPasskey(user.id, {
        name,
        credentialId: base64url(1025).slice(0, 1366),
        publicKey: base64url(1536),
        transports: ['usb', 'nfc', 'ble', 'smart-card', 'hybrid', 'internal'],
        counter: 4_294_967_295,
      })
      expect(passkey.credentialId).toHaveLength(1366)
      expect(passkey.publicKey).toHaveLength(2048)
      expect(await stores.factors.add(totp)).toBe('added')
      expect(await stores.factors.add(passkey)).toBe('added')
      expect(await stores.factors.list(user.id)).toEqual(
        [totp, passkey].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1)),
      )
      expect(await stores.factors.findPasskey(passkey.credentialId as string)).toEqual(passkey)
    })

    it('findPasskey finds a passkey by its credential id, whatever its account; null otherwise', async () => {
      const [first, second] = [await created(), await created()]
      const passkey = newPasskey(second.id)
      await stores.factors.add(newPasskey(first.id))
      await stores.factors.add(passkey)
      expect(await stores.factors.findPasskey(passkey.credentialId as string)).toEqual(passkey)
      expect(await stores.factors.findPasskey(base64url(32))).toBeNull()
      // base64url is case-sensitive: the same letters in another case are another credential
      const swapped = (passkey.credentialId as string).replace(/[a-zA-Z]/g, (c) =>
        c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase(),
      )
      expect(await stores.factors.findPasskey(swapped)).toBeNull()
    })

    it("'taken' for a credential id stored already, for this account or another; nothing stored", async () => {
      const [first, second] = [await created(), await created()]
      const passkey = newPasskey(first.id)
      expect(await stores.factors.add(passkey)).toBe('added')
      expect(await stores.factors.add({ ...passkey, id: hexId(), userId: second.id })).toBe('taken')
      expect(await stores.factors.add({ ...passkey, id: hexId(), name: 'Again' })).toBe('taken')
      expect(await stores.factors.list(first.id)).toEqual([passkey])
      expect(await stores.factors.list(second.id)).toEqual([])
      // TOTP factors have no credential: any number of them
      expect(await stores.factors.add(newTotp(second.id))).toBe('added')
      expect(await stores.factors.add(newTotp(second.id))).toBe('added')
    })

    it('of concurrent additions of one credential to several accounts exactly one is added', async () => {
      const accounts = await all(10, () => created())
      const credentialId = base64url(64)
      const results = await Promise.all(
        accounts.map((account) => stores.factors.add(newPasskey(account.id, { credentialId }))),
      )
      expect(results.filter((result) => result === 'added')).toHaveLength(1)
      expect(results.filter((result) => result === 'taken')).toHaveLength(9)
      const holder = accounts[results.indexOf('added')]
      expect((await stores.factors.findPasskey(credentialId))?.userId).toBe(holder?.id)
    })

    it("'missing' when there is no such account; nothing stored", async () => {
      const passkey = newPasskey(generateUserId())
      expect(await stores.factors.add(passkey)).toBe('missing')
      expect(await stores.factors.add(newTotp(passkey.userId))).toBe('missing')
      expect(await stores.factors.findPasskey(passkey.credentialId as string)).toBeNull()
      expect(await stores.factors.list(passkey.userId)).toEqual([])
    })

    it('confirm confirms the pending TOTP factor once, with its step and last use; false for anything else', async () => {
      const [user, other] = [await created(), await created()]
      const factor = newTotp(user.id)
      const passkey = newPasskey(user.id)
      await stores.factors.add(factor)
      await stores.factors.add(passkey)
      const now = factor.createdAt + 30_000
      expect(await stores.factors.confirm(other.id, factor.id, 100, now)).toBe(false)
      expect(await stores.factors.confirm(user.id, hexId(), 100, now)).toBe(false)
      expect(await stores.factors.confirm(user.id, passkey.id, 100, now)).toBe(false)
      expect(await stores.factors.list(user.id)).toEqual(expect.arrayContaining([factor, passkey]))
      expect(await stores.factors.confirm(user.id, factor.id, 100, now)).toBe(true)
      const confirmed = { ...factor, confirmed: true, lastStep: 100, lastUsedAt: now }
      expect((await stores.factors.list(user.id)).find((f) => f.id === factor.id)).toEqual(confirmed)
      expect(await stores.factors.confirm(user.id, factor.id, 101, now + 1)).toBe(false)
      expect((await stores.factors.list(user.id)).find((f) => f.id === factor.id)).toEqual(confirmed)
    })

    it('of concurrent confirmations of one pending factor exactly one is true', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const user = await created()
        const factor = newTotp(user.id)
        await stores.factors.add(factor)
        const results = await all(CONCURRENT, (i) =>
          stores.factors.confirm(user.id, factor.id, 500 + i, 1 + i),
        )
        expect(trueCount(results)).toBe(1)
        const winner = results.indexOf(true)
        expect(await stores.factors.list(user.id)).toEqual([
          { ...factor, confirmed: true, lastStep: 500 + winner, lastUsedAt: 1 + winner },
        ])
      }
    })

    it('useStep accepts a step above the last one only, and sets it with the last use', async () => {
      const { user, factor } = await withConfirmedTotp(1_000)
      const now = Date.now()
      expect(await stores.factors.useStep(user.id, factor.id, 1_000, now)).toBe(false)
      expect(await stores.factors.useStep(user.id, factor.id, 999, now)).toBe(false)
      expect(await stores.factors.list(user.id)).toEqual([factor])
      expect(await stores.factors.useStep(user.id, factor.id, 1_001, now)).toBe(true)
      expect(await stores.factors.list(user.id)).toEqual([{ ...factor, lastStep: 1_001, lastUsedAt: now }])
      expect(await stores.factors.useStep(user.id, factor.id, 1_001, now + 1)).toBe(false)
      expect(await stores.factors.useStep(user.id, factor.id, 1_003, now + 2)).toBe(true)
      expect(await stores.factors.useStep(user.id, factor.id, 1_002, now + 3)).toBe(false)
      expect(await stores.factors.list(user.id)).toEqual([
        { ...factor, lastStep: 1_003, lastUsedAt: now + 2 },
      ])
    })

    it('useStep is false on a pending factor, a passkey, another account, an unknown id', async () => {
      const [user, other] = [await created(), await created()]
      const pending = newTotp(user.id)
      const passkey = newPasskey(user.id)
      await stores.factors.add(pending)
      await stores.factors.add(passkey)
      expect(await stores.factors.useStep(user.id, pending.id, 5, 1)).toBe(false)
      expect(await stores.factors.useStep(user.id, passkey.id, 5, 1)).toBe(false)
      expect(await stores.factors.useStep(user.id, hexId(), 5, 1)).toBe(false)
      const { factor } = await withConfirmedTotp(1)
      expect(await stores.factors.useStep(other.id, factor.id, 5, 1)).toBe(false)
      expect(await stores.factors.list(user.id)).toEqual(expect.arrayContaining([pending, passkey]))
    })

    it('of concurrent uses of one step on one factor exactly one is true: no code is accepted twice', async () => {
      const { user, factor } = await withConfirmedTotp(1_000)
      for (let round = 1; round <= ROUNDS; round++) {
        const step = 1_000 + round
        const results = await all(CONCURRENT, (i) => stores.factors.useStep(user.id, factor.id, step, i))
        expect(trueCount(results)).toBe(1)
        expect((await stores.factors.list(user.id))[0]).toMatchObject({
          lastStep: step,
          lastUsedAt: results.indexOf(true),
        })
      }
    })

    it('usePasskey swaps the counter while it is the expected one, with backedUp and the last use', async () => {
      const user = await created()
      const passkey = newPasskey(user.id, { counter: 5 })
      const totp = newTotp(user.id, { createdAt: passkey.createdAt + 1 })
      await stores.factors.add(passkey)
      await stores.factors.add(totp)
      expect(await stores.factors.usePasskey(passkey.id, 4, 6, false, 10)).toBe(false)
      expect(await stores.factors.usePasskey(totp.id, 0, 1, false, 10)).toBe(false)
      expect(await stores.factors.usePasskey(hexId(), 5, 6, false, 10)).toBe(false)
      expect(await stores.factors.list(user.id)).toEqual([passkey, totp])
      expect(await stores.factors.usePasskey(passkey.id, 5, 6, false, 10)).toBe(true)
      const used = { ...passkey, counter: 6, backedUp: false, lastUsedAt: 10 }
      expect(await stores.factors.findPasskey(passkey.credentialId as string)).toEqual(used)
      expect(await stores.factors.usePasskey(passkey.id, 5, 7, true, 11)).toBe(false)
      // an authenticator without a counter reports 0 every time: the swap from 0 to 0 still records the use
      const zero = newPasskey(user.id)
      await stores.factors.add(zero)
      expect(await stores.factors.usePasskey(zero.id, 0, 0, true, 12)).toBe(true)
      expect(await stores.factors.findPasskey(zero.credentialId as string)).toEqual({
        ...zero,
        lastUsedAt: 12,
      })
    })

    it('of concurrent swaps from one counter exactly one is true', async () => {
      const user = await created()
      const passkey = newPasskey(user.id, { counter: 10 })
      await stores.factors.add(passkey)
      for (let round = 0; round < ROUNDS; round++) {
        const expected = 10 + round
        const results = await all(CONCURRENT, () =>
          stores.factors.usePasskey(passkey.id, expected, expected + 1, true, round),
        )
        expect(trueCount(results)).toBe(1)
      }
      expect((await stores.factors.findPasskey(passkey.credentialId as string))?.counter).toBe(10 + ROUNDS)
    })
  })

  describe('FactorStore: removal and pruning', () => {
    it('remove removes the factor and tells how many confirmed ones remain; the codes stay while one does', async () => {
      const { user, factor } = await withConfirmedTotp()
      const passkey = newPasskey(user.id)
      const pending = newTotp(user.id)
      await stores.factors.add(passkey)
      await stores.factors.add(pending)
      await stores.factors.replaceRecoveryCodes(user.id, [digest(), digest()])
      expect(await stores.factors.remove(user.id, pending.id)).toEqual({ removed: true, remaining: 2 })
      expect(await stores.factors.remove(user.id, pending.id)).toEqual({ removed: false, remaining: 2 })
      expect(await stores.factors.remove(user.id, factor.id)).toEqual({ removed: true, remaining: 1 })
      expect(await stores.factors.recoveryCodesLeft(user.id)).toBe(2)
      expect(await stores.factors.list(user.id)).toEqual([passkey])
    })

    it('remove of the last confirmed factor removes the recovery codes too; a pending one counts for nothing', async () => {
      const { user, factor } = await withConfirmedTotp()
      const pending = newTotp(user.id)
      await stores.factors.add(pending)
      const codes = [digest(), digest(), digest()]
      await stores.factors.replaceRecoveryCodes(user.id, codes)
      expect(await stores.factors.remove(user.id, factor.id)).toEqual({ removed: true, remaining: 0 })
      expect(await stores.factors.recoveryCodesLeft(user.id)).toBe(0)
      expect(await stores.factors.useRecoveryCode(user.id, codes[0] as string)).toBe(false)
      expect(await stores.factors.list(user.id)).toEqual([pending])
    })

    it("remove of another account's factor removes nothing", async () => {
      const { user, factor } = await withConfirmedTotp()
      const other = await created()
      expect(await stores.factors.remove(other.id, factor.id)).toEqual({ removed: false, remaining: 0 })
      expect(await stores.factors.list(user.id)).toEqual([factor])
    })

    it('of concurrent removals of every confirmed factor of an account, the codes go with the last', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const { user, factor } = await withConfirmedTotp()
        const passkeys = await all(3, async () => {
          const passkey = newPasskey(user.id)
          await stores.factors.add(passkey)
          return passkey
        })
        await stores.factors.replaceRecoveryCodes(user.id, [digest(), digest()])
        const results = await Promise.all(
          [factor, ...passkeys].map((f) => stores.factors.remove(user.id, f.id)),
        )
        expect(results.every((result) => result.removed)).toBe(true)
        expect(results.map((result) => result.remaining)).toContain(0)
        expect(await stores.factors.list(user.id)).toEqual([])
        expect(await stores.factors.recoveryCodesLeft(user.id)).toBe(0)
      }
    })

    it("removeAll removes every factor and code of the account, and no other account's", async () => {
      const { user } = await withConfirmedTotp()
      await stores.factors.add(newPasskey(user.id))
      await stores.factors.add(newTotp(user.id))
      await stores.factors.replaceRecoveryCodes(user.id, [digest(), digest()])
      const { user: other, factor: kept } = await withConfirmedTotp()
      const otherCode = digest()
      await stores.factors.replaceRecoveryCodes(other.id, [otherCode])
      expect(await stores.factors.removeAll(user.id)).toBe(3)
      expect(await stores.factors.list(user.id)).toEqual([])
      expect(await stores.factors.recoveryCodesLeft(user.id)).toBe(0)
      expect(await stores.factors.removeAll(user.id)).toBe(0)
      expect(await stores.factors.list(other.id)).toEqual([kept])
      expect(await stores.factors.useRecoveryCode(other.id, otherCode)).toBe(true)
    })

    it('prunePending removes the pending factors created at or before `before`, in batches, and only those', async () => {
      // far in the past, so that no other test's factor is due for pruning
      const before = 2_000_000
      expect(await stores.factors.prunePending(before)).toBe(0)
      const user = await created()
      // more than one pruning batch (1,000)
      const pending = Array.from({ length: 1_050 }, (_, i) => newTotp(user.id, { createdAt: before - i }))
      const later = newTotp(user.id, { createdAt: before + 1 })
      const confirmedOld = newTotp(user.id, { createdAt: before - 5_000 })
      const passkeyOld = newPasskey(user.id, { createdAt: before - 5_000 })
      // a few at a time: a thousand at once would wait for the pool longer than a storage call may on a loaded machine
      const factors = [...pending, later, confirmedOld, passkeyOld]
      for (let start = 0; start < factors.length; start += 25) {
        const chunk = factors.slice(start, start + 25)
        expect(await Promise.all(chunk.map((f) => stores.factors.add(f)))).toEqual(chunk.map(() => 'added'))
      }
      expect(await stores.factors.confirm(user.id, confirmedOld.id, 1, 1)).toBe(true)
      expect(await stores.factors.prunePending(before)).toBe(pending.length)
      expect(await stores.factors.prunePending(before)).toBe(0)
      expect((await stores.factors.list(user.id)).map((f) => f.id).sort()).toEqual(
        [later.id, confirmedOld.id, passkeyOld.id].sort(),
      )
      expect(await stores.factors.prunePending(before + 1)).toBe(1)
    })

    it("the account's deletion removes its factors and codes: its credential may be added again", async () => {
      const { user } = await withConfirmedTotp()
      const passkey = newPasskey(user.id)
      await stores.factors.add(passkey)
      const code = digest()
      await stores.factors.replaceRecoveryCodes(user.id, [code, digest()])
      expect(await stores.users.delete(user.id)).toBe(true)
      expect(await stores.factors.list(user.id)).toEqual([])
      expect(await stores.factors.findPasskey(passkey.credentialId as string)).toBeNull()
      expect(await stores.factors.recoveryCodesLeft(user.id)).toBe(0)
      expect(await stores.factors.useRecoveryCode(user.id, code)).toBe(false)
      const other = await created()
      expect(await stores.factors.add({ ...passkey, userId: other.id })).toBe('added')
    })
  })

  describe('FactorStore: recovery codes', () => {
    it('replaceRecoveryCodes replaces the set; each code is used once; recoveryCodesLeft counts what is left', async () => {
      const { user } = await withConfirmedTotp()
      expect(await stores.factors.recoveryCodesLeft(user.id)).toBe(0)
      const first = Array.from({ length: 10 }, digest)
      await stores.factors.replaceRecoveryCodes(user.id, first)
      expect(await stores.factors.recoveryCodesLeft(user.id)).toBe(10)
      expect(await stores.factors.useRecoveryCode(user.id, first[0] as string)).toBe(true)
      expect(await stores.factors.useRecoveryCode(user.id, first[0] as string)).toBe(false)
      expect(await stores.factors.useRecoveryCode(user.id, digest())).toBe(false)
      expect(await stores.factors.recoveryCodesLeft(user.id)).toBe(9)
      const second = Array.from({ length: 10 }, digest)
      await stores.factors.replaceRecoveryCodes(user.id, second)
      expect(await stores.factors.recoveryCodesLeft(user.id)).toBe(10)
      // the old set is void
      expect(await stores.factors.useRecoveryCode(user.id, first[1] as string)).toBe(false)
      expect(await stores.factors.useRecoveryCode(user.id, second[9] as string)).toBe(true)
      await stores.factors.replaceRecoveryCodes(user.id, [])
      expect(await stores.factors.recoveryCodesLeft(user.id)).toBe(0)
      expect(await stores.factors.useRecoveryCode(user.id, second[0] as string)).toBe(false)
    })

    it("an account's code is no other account's", async () => {
      const [{ user }, { user: other }] = [await withConfirmedTotp(), await withConfirmedTotp()]
      const code = digest()
      await stores.factors.replaceRecoveryCodes(user.id, [code])
      expect(await stores.factors.useRecoveryCode(other.id, code)).toBe(false)
      expect(await stores.factors.recoveryCodesLeft(user.id)).toBe(1)
      // the same digest may be both accounts' (the key is the account and the digest)
      await stores.factors.replaceRecoveryCodes(other.id, [code])
      expect(await stores.factors.useRecoveryCode(other.id, code)).toBe(true)
      expect(await stores.factors.useRecoveryCode(user.id, code)).toBe(true)
    })

    it('replaceRecoveryCodes fails without the account, and stores nothing', async () => {
      const id = generateUserId()
      await expect(stores.factors.replaceRecoveryCodes(id, [digest()])).rejects.toBeInstanceOf(StorageError)
      expect(await stores.factors.recoveryCodesLeft(id)).toBe(0)
    })

    it('of concurrent uses of one code exactly one is true', async () => {
      const { user } = await withConfirmedTotp()
      const codes = Array.from({ length: ROUNDS }, digest)
      await stores.factors.replaceRecoveryCodes(user.id, codes)
      for (const code of codes) {
        expect(trueCount(await all(CONCURRENT, () => stores.factors.useRecoveryCode(user.id, code)))).toBe(1)
      }
      expect(await stores.factors.recoveryCodesLeft(user.id)).toBe(0)
    })

    it('of concurrent replacements one set remains, whole', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const { user } = await withConfirmedTotp()
        const sets = Array.from({ length: 5 }, () => Array.from({ length: 10 }, digest))
        await Promise.all(sets.map((set) => stores.factors.replaceRecoveryCodes(user.id, set)))
        expect(await stores.factors.recoveryCodesLeft(user.id)).toBe(10)
        // which set: the one whose first code works; then every other code of it works, and none of the others
        const usable = await Promise.all(
          sets.map((set) => stores.factors.useRecoveryCode(user.id, set[0] as string)),
        )
        expect(trueCount(usable)).toBe(1)
        const kept = sets[usable.indexOf(true)] as string[]
        for (const code of kept.slice(1))
          expect(await stores.factors.useRecoveryCode(user.id, code)).toBe(true)
        expect(await stores.factors.recoveryCodesLeft(user.id)).toBe(0)
      }
    })

    it('a replacement while the old codes are being used: the new set stays whole, and no old code outlives it', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const { user } = await withConfirmedTotp()
        const old = Array.from({ length: 10 }, digest)
        const fresh = Array.from({ length: 10 }, digest)
        await stores.factors.replaceRecoveryCodes(user.id, old)
        await Promise.all([
          ...old.map((code) => stores.factors.useRecoveryCode(user.id, code)),
          stores.factors.replaceRecoveryCodes(user.id, fresh),
        ])
        expect(await stores.factors.recoveryCodesLeft(user.id)).toBe(10)
        for (const code of old) expect(await stores.factors.useRecoveryCode(user.id, code)).toBe(false)
        for (const code of fresh) expect(await stores.factors.useRecoveryCode(user.id, code)).toBe(true)
      }
    })
  })

  describe('ServiceKeyStore', () => {
    const keyName = () => `key_${randomBytes(4).toString('hex')}`

    it('get is null until putIfAbsent stores a value; a second putIfAbsent keeps the first', async () => {
      const name = keyName()
      expect(await stores.serviceKeys.get(name)).toBeNull()
      const value = `v1.${base64url(48)}`
      expect(await stores.serviceKeys.putIfAbsent(name, value)).toBe(value)
      expect(await stores.serviceKeys.get(name)).toBe(value)
      expect(await stores.serviceKeys.putIfAbsent(name, 'v1.other')).toBe(value)
      expect(await stores.serviceKeys.get(name)).toBe(value)
    })

    it('names of 1 and 32 characters, and a value of 512, round-trip', async () => {
      const long = `k-${randomBytes(15).toString('hex')}`
      expect(long).toHaveLength(32)
      const value = `${'V'.repeat(511)}=`
      expect(await stores.serviceKeys.putIfAbsent(long, value)).toBe(value)
      expect(await stores.serviceKeys.get(long)).toBe(value)
      // each backend's store is a fresh one, in which this test alone names a key `a`
      expect(await stores.serviceKeys.putIfAbsent('a', 'one')).toBe('one')
      expect(await stores.serviceKeys.get('a')).toBe('one')
    })

    it('of concurrent putIfAbsent calls with different values, every one resolves with the one stored', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const name = keyName()
        const values = Array.from({ length: CONCURRENT }, () => `v1.${base64url(24)}`)
        const results = await Promise.all(values.map((value) => stores.serviceKeys.putIfAbsent(name, value)))
        const [stored] = results
        expect(values).toContain(stored)
        expect(results).toEqual(values.map(() => stored))
        expect(await stores.serviceKeys.get(name)).toBe(stored)
      }
    })

    it('replace swaps the value only while it is the expected one, compared exactly', async () => {
      const name = keyName()
      await stores.serviceKeys.putIfAbsent(name, 'v1.First')
      expect(await stores.serviceKeys.replace(name, 'v1.first', 'v1.second')).toBe(false)
      expect(await stores.serviceKeys.replace(name, 'v1.First ', 'v1.second')).toBe(false)
      expect(await stores.serviceKeys.replace(name, 'v1.Firs', 'v1.second')).toBe(false)
      expect(await stores.serviceKeys.get(name)).toBe('v1.First')
      expect(await stores.serviceKeys.replace(name, 'v1.First', 'v1.second')).toBe(true)
      expect(await stores.serviceKeys.get(name)).toBe('v1.second')
      expect(await stores.serviceKeys.replace(name, 'v1.First', 'v1.third')).toBe(false)
      expect(await stores.serviceKeys.replace(keyName(), 'v1.First', 'v1.third')).toBe(false)
      expect(await stores.serviceKeys.get(name)).toBe('v1.second')
    })

    it('of concurrent replacements from one value exactly one is true', async () => {
      const name = keyName()
      await stores.serviceKeys.putIfAbsent(name, 'v1.start')
      const values = Array.from({ length: CONCURRENT }, (_, i) => `v1.next-${i}`)
      const results = await Promise.all(
        values.map((value) => stores.serviceKeys.replace(name, 'v1.start', value)),
      )
      expect(trueCount(results)).toBe(1)
      expect(await stores.serviceKeys.get(name)).toBe(values[results.indexOf(true)])
    })
  })
})
