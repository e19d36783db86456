import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { generateUserId } from '../../src/auth/user-id.js'
import type { ProviderLink, StoredAvatar, Stores, UserRecord } from '../../src/storage/stores.js'
import { backends } from '../support/backends.js'
import { contractAccounts, STORED_PASSWORD_HASH, useContractStores } from './contract-setup.js'

/**
 * The contract of the stores of issue 22 (migration 0006) on every backend, against real servers: the accounts'
 * profile, role and status, the avatars, the provider links and the one-time tickets, all in the SQL database
 * whatever REDIS_URL says.
 */
describe.each(backends)('profile storage contract [$name]', (backend) => {
  let stores: Stores
  useContractStores(backend, (opened) => {
    stores = opened.stores
  })

  let serial = 0
  const ROUNDS = Number(process.env.ROUNDS ?? 5)
  const { newUser, created } = contractAccounts('profile', () => stores)
  /** A username no other test uses: 3 to 32 of a-z 0-9 _ . - */
  const username = () => `user_${serial++}.${randomBytes(4).toString('hex')}`
  const later = (user: UserRecord, seconds: number) =>
    new Date(Date.parse(user.createdAt) + seconds * 1000).toISOString()

  describe('UserStore: profile, role, status', () => {
    it('an account created without a profile reads back with the defaults', async () => {
      const user = await created()
      const expected: UserRecord = {
        ...user,
        username: null,
        nickname: null,
        bio: null,
        avatarId: null,
        role: 'user',
        status: 'active',
        updatedAt: user.createdAt,
        providers: [],
      }
      expect(await stores.users.findById(user.id)).toEqual(expected)
      expect(await stores.users.findByEmail(user.email)).toEqual(expected)
    })

    it('an account created with a profile, a role and a status reads back exactly; avatarId and providers are never written', async () => {
      // 64 and 500 characters, some outside the BMP (two UTF-16 units, four UTF-8 bytes, one character everywhere)
      const nickname = `${'é'.repeat(62)}😀ß`
      const bio = `${"l'été ".repeat(80)}${'😀'.repeat(20)}`
      expect([...nickname]).toHaveLength(64)
      expect([...bio]).toHaveLength(500)
      const user = newUser({ username: username(), nickname, bio, role: 'admin', status: 'disabled' })
      const written = { ...user, updatedAt: later(user, 5), avatarId: 'f'.repeat(32), providers: ['google'] }
      expect(await stores.users.create(written)).toBe('created')
      const expected = { ...written, avatarId: null, providers: [] }
      expect(await stores.users.findById(user.id)).toEqual(expected)
      expect(await stores.users.findByEmail(user.email)).toEqual(expected)
    })

    it('updateProfile replaces the three fields and updated_at only; null clears them', async () => {
      const user = await created({ emailVerified: true })
      const profile = { username: username(), nickname: 'Ada', bio: 'Writes programs.' }
      expect(await stores.users.updateProfile(user.id, profile, later(user, 1))).toBe('updated')
      expect(await stores.users.findById(user.id)).toEqual({ ...user, ...profile, updatedAt: later(user, 1) })
      const cleared = { username: null, nickname: null, bio: null }
      expect(await stores.users.updateProfile(user.id, cleared, later(user, 2))).toBe('updated')
      expect(await stores.users.findById(user.id)).toEqual({ ...user, ...cleared, updatedAt: later(user, 2) })
      // the same values again still count as the account's
      expect(await stores.users.updateProfile(user.id, cleared, later(user, 2))).toBe('updated')
    })

    it("updateProfile: 'username_taken' for another account's username, nothing changed; its own is no conflict", async () => {
      const name = username()
      const holder = await created({ username: name })
      const other = await created()
      const profile = { username: name, nickname: 'Other', bio: null }
      expect(await stores.users.updateProfile(other.id, profile, later(other, 1))).toBe('username_taken')
      expect(await stores.users.findById(other.id)).toEqual(other)
      // the service lower-cases before it stores: the unique index sees the lower-cased name
      expect(name).toBe(name.toLowerCase())
      expect(
        await stores.users.updateProfile(holder.id, { ...profile, nickname: 'Holder' }, later(holder, 1)),
      ).toBe('updated')
      // once released, it is free
      await stores.users.updateProfile(
        holder.id,
        { username: null, nickname: null, bio: null },
        later(holder, 2),
      )
      expect(await stores.users.updateProfile(other.id, profile, later(other, 2))).toBe('updated')
      expect(await stores.users.findById(other.id)).toMatchObject({ username: name })
    })

    it("updateProfile: 'missing' without the account", async () => {
      expect(
        await stores.users.updateProfile(
          '1000000002',
          { username: username(), nickname: null, bio: null },
          'x',
        ),
      ).toBe('missing')
    })

    it('of concurrent updates of several accounts to one username exactly one gets it', async () => {
      const accounts = await Promise.all(Array.from({ length: 10 }, () => created()))
      const name = username()
      const results = await Promise.all(
        accounts.map((account) =>
          stores.users.updateProfile(
            account.id,
            { username: name, nickname: null, bio: null },
            later(account, 1),
          ),
        ),
      )
      expect(results.filter((result) => result === 'updated')).toHaveLength(1)
      expect(results.filter((result) => result === 'username_taken')).toHaveLength(9)
    })

    it('setRole and setStatus set their value and updated_at; false without the account', async () => {
      const user = await created()
      expect(await stores.users.setRole(user.id, 'moderator', later(user, 1))).toBe(true)
      expect(await stores.users.findById(user.id)).toEqual({
        ...user,
        role: 'moderator',
        updatedAt: later(user, 1),
      })
      expect(await stores.users.setStatus(user.id, 'disabled', later(user, 2))).toBe(true)
      expect(await stores.users.findById(user.id)).toEqual({
        ...user,
        role: 'moderator',
        status: 'disabled',
        updatedAt: later(user, 2),
      })
      // unchanged values still find the account (MySQL counts found rows, not changed ones)
      expect(await stores.users.setStatus(user.id, 'disabled', later(user, 2))).toBe(true)
      expect(await stores.users.setRole(user.id, 'moderator', later(user, 2))).toBe(true)
      expect(await stores.users.setStatus(user.id, 'active', later(user, 3))).toBe(true)
      expect(await stores.users.findById(user.id)).toMatchObject({
        status: 'active',
        updatedAt: later(user, 3),
      })
      expect(await stores.users.setRole('1000000002', 'admin', later(user, 4))).toBe(false)
      expect(await stores.users.setStatus('1000000002', 'disabled', later(user, 4))).toBe(false)
    })

    it('list reads the profile, the avatar and the providers with each account', async () => {
      const first = await created({ username: username(), nickname: 'First' })
      const second = await created()
      const avatar = newAvatar(first.id)
      expect(await stores.avatars.put(avatar)).toBe(true)
      expect(await stores.providerLinks.link(newLink(second.id, 'google'))).toBe('linked')
      const page = await stores.users.list({ limit: 10_000 })
      expect(page.find((user) => user.id === first.id)).toEqual({ ...first, avatarId: avatar.id })
      expect(page.find((user) => user.id === second.id)).toEqual({ ...second, providers: ['google'] })
    })
  })

  const newAvatar = (userId: string, overrides: Partial<StoredAvatar> = {}): StoredAvatar => ({
    id: randomBytes(16).toString('hex'),
    userId,
    contentType: 'image/png',
    // every byte value, NUL included
    data: Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 7) % 256)),
    createdAt: Date.now(),
    ...overrides,
  })

  describe('AvatarStore', () => {
    it('put, then get by id: the image byte for byte; the account reads its avatar id', async () => {
      const user = await created()
      const avatar = newAvatar(user.id)
      expect(await stores.avatars.put(avatar)).toBe(true)
      const image = await stores.avatars.get(avatar.id)
      expect(image).toEqual({ contentType: 'image/png', data: avatar.data })
      expect(Buffer.isBuffer(image?.data)).toBe(true)
      expect(await stores.users.findById(user.id)).toEqual({ ...user, avatarId: avatar.id })
      expect(await stores.avatars.get(randomBytes(16).toString('hex'))).toBeNull()
    })

    it('an image of 1 MiB round-trips', async () => {
      const user = await created()
      const avatar = newAvatar(user.id, { contentType: 'image/webp', data: randomBytes(1024 * 1024) })
      expect(await stores.avatars.put(avatar)).toBe(true)
      const image = await stores.avatars.get(avatar.id)
      expect(image?.contentType).toBe('image/webp')
      // compared by Buffer.equals: a deep equality of a million elements takes the test's seconds
      expect(image?.data.equals(avatar.data)).toBe(true)
    })

    it('a new upload replaces the previous one: its id is no longer found', async () => {
      const user = await created()
      const first = newAvatar(user.id)
      const second = newAvatar(user.id, { contentType: 'image/jpeg', data: Buffer.from('second image') })
      expect(await stores.avatars.put(first)).toBe(true)
      expect(await stores.avatars.put(second)).toBe(true)
      expect(await stores.avatars.get(first.id)).toBeNull()
      expect(await stores.avatars.get(second.id)).toEqual({ contentType: 'image/jpeg', data: second.data })
      expect(await stores.users.findById(user.id)).toMatchObject({ avatarId: second.id })
    })

    it('of concurrent uploads for one account one remains, and only its id is found', async () => {
      const user = await created()
      const avatars = Array.from({ length: 10 }, () => newAvatar(user.id))
      expect(await Promise.all(avatars.map((avatar) => stores.avatars.put(avatar)))).toEqual(
        avatars.map(() => true),
      )
      const found = await Promise.all(avatars.map((avatar) => stores.avatars.get(avatar.id)))
      expect(found.filter((image) => image !== null)).toHaveLength(1)
      const kept = avatars[found.findIndex((image) => image !== null)]
      expect(await stores.users.findById(user.id)).toMatchObject({ avatarId: kept?.id })
    })

    it("delete removes the account's avatar: true once, then false", async () => {
      const user = await created()
      const avatar = newAvatar(user.id)
      await stores.avatars.put(avatar)
      expect(await stores.avatars.delete(user.id)).toBe(true)
      expect(await stores.avatars.delete(user.id)).toBe(false)
      expect(await stores.avatars.get(avatar.id)).toBeNull()
      expect(await stores.users.findById(user.id)).toEqual(user)
    })

    it('put is false, with nothing stored, when there is no such account', async () => {
      const avatar = newAvatar(generateUserId())
      expect(await stores.avatars.put(avatar)).toBe(false)
      expect(await stores.avatars.get(avatar.id)).toBeNull()
    })

    it("the account's deletion removes its avatar", async () => {
      const user = await created()
      const avatar = newAvatar(user.id)
      await stores.avatars.put(avatar)
      expect(await stores.users.delete(user.id)).toBe(true)
      expect(await stores.avatars.get(avatar.id)).toBeNull()
      expect(await stores.avatars.put(newAvatar(user.id))).toBe(false)
    })
  })

  const newLink = (
    userId: string,
    provider: string,
    overrides: Partial<ProviderLink> = {},
  ): ProviderLink => ({
    provider,
    subject: `subject-${serial++}-${randomBytes(4).toString('hex')}`,
    userId,
    email: `linked-${serial++}@example.com`,
    createdAt: Date.now(),
    ...overrides,
  })

  describe('ProviderLinkStore', () => {
    it('link, then find by (provider, subject), list by provider, and the account reads its providers sorted', async () => {
      const user = await created()
      const google = newLink(user.id, 'google')
      const github = newLink(user.id, 'github', { subject: '583231', email: null })
      const oidc = newLink(user.id, 'acme-sso')
      for (const link of [google, github, oidc]) expect(await stores.providerLinks.link(link)).toBe('linked')
      expect(await stores.providerLinks.find('google', google.subject)).toEqual(google)
      expect(await stores.providerLinks.find('github', '583231')).toEqual(github)
      expect(await stores.providerLinks.find('github', google.subject)).toBeNull()
      expect(await stores.providerLinks.list(user.id)).toEqual([oidc, github, google])
      const providers = ['acme-sso', 'github', 'google']
      expect(await stores.users.findById(user.id)).toEqual({ ...user, providers })
      expect(await stores.users.findByEmail(user.email)).toEqual({ ...user, providers })
      expect(await stores.providerLinks.list(generateUserId())).toEqual([])
    })

    it("'taken' when the provider's account is linked already, to this account or another; nothing changed", async () => {
      const user = await created()
      const other = await created()
      const link = newLink(user.id, 'google')
      expect(await stores.providerLinks.link(link)).toBe('linked')
      expect(await stores.providerLinks.link({ ...link, userId: other.id })).toBe('taken')
      expect(await stores.providerLinks.link({ ...link, email: 'again@example.com' })).toBe('taken')
      expect(await stores.providerLinks.find('google', link.subject)).toEqual(link)
      expect(await stores.providerLinks.list(other.id)).toEqual([])
    })

    it("'taken' when the account has an account of that provider already", async () => {
      const user = await created()
      const first = newLink(user.id, 'github')
      expect(await stores.providerLinks.link(first)).toBe('linked')
      const second = newLink(user.id, 'github')
      expect(await stores.providerLinks.link(second)).toBe('taken')
      expect(await stores.providerLinks.find('github', second.subject)).toBeNull()
      expect(await stores.providerLinks.list(user.id)).toEqual([first])
    })

    it("of concurrent links of one provider's account to several accounts exactly one is linked", async () => {
      const accounts = await Promise.all(Array.from({ length: 10 }, () => created()))
      const subject = `contested-${randomBytes(4).toString('hex')}`
      const results = await Promise.all(
        accounts.map((account) => stores.providerLinks.link(newLink(account.id, 'google', { subject }))),
      )
      expect(results.filter((result) => result === 'linked')).toHaveLength(1)
      expect(results.filter((result) => result === 'taken')).toHaveLength(9)
    })

    it("'missing' when there is no such account; nothing stored", async () => {
      const link = newLink(generateUserId(), 'google')
      expect(await stores.providerLinks.link(link)).toBe('missing')
      expect(await stores.providerLinks.find('google', link.subject)).toBeNull()
    })

    it("unlink: 'unlinked' for an account with a password, 'not_linked' when there is no such link", async () => {
      const user = await created()
      const link = newLink(user.id, 'google')
      await stores.providerLinks.link(link)
      expect(await stores.providerLinks.unlink(user.id, 'github')).toBe('not_linked')
      expect(await stores.providerLinks.unlink(user.id, 'google')).toBe('unlinked')
      expect(await stores.providerLinks.find('google', link.subject)).toBeNull()
      expect(await stores.providerLinks.unlink(user.id, 'google')).toBe('not_linked')
      expect(await stores.users.findById(user.id)).toEqual(user)
      expect(await stores.providerLinks.unlink(generateUserId(), 'google')).toBe('not_linked')
    })

    it("unlink: 'only_way_in' for the last link of an account without a password; another link makes it 'unlinked'", async () => {
      const user = await created({ passwordHash: null })
      const google = newLink(user.id, 'google')
      const github = newLink(user.id, 'github')
      await stores.providerLinks.link(google)
      expect(await stores.providerLinks.unlink(user.id, 'google')).toBe('only_way_in')
      expect(await stores.providerLinks.find('google', google.subject)).toEqual(google)
      await stores.providerLinks.link(github)
      expect(await stores.providerLinks.unlink(user.id, 'google')).toBe('unlinked')
      expect(await stores.providerLinks.unlink(user.id, 'github')).toBe('only_way_in')
      expect(await stores.users.findById(user.id)).toEqual({ ...user, providers: ['github'] })
      // a password set since is a way in
      await stores.users.updatePasswordHash(user.id, STORED_PASSWORD_HASH)
      expect(await stores.providerLinks.unlink(user.id, 'github')).toBe('unlinked')
      expect(await stores.users.findById(user.id)).toEqual({ ...user, passwordHash: STORED_PASSWORD_HASH })
    })

    it('of concurrent unlinks of every link of an account without a password, exactly one link remains', async () => {
      const providers = ['github', 'google', 'acme-sso']
      for (let round = 0; round < ROUNDS; round++) {
        const user = await created({ passwordHash: null })
        for (const provider of providers) await stores.providerLinks.link(newLink(user.id, provider))
        const results = await Promise.all(
          providers.map((provider) => stores.providerLinks.unlink(user.id, provider)),
        )
        expect(results.filter((result) => result === 'unlinked')).toHaveLength(2)
        expect(results.filter((result) => result === 'only_way_in')).toHaveLength(1)
        expect(await stores.providerLinks.list(user.id)).toHaveLength(1)
      }
    })

    it("the account's deletion removes its links: the provider's account may be linked again", async () => {
      const user = await created()
      const link = newLink(user.id, 'google')
      await stores.providerLinks.link(link)
      expect(await stores.users.delete(user.id)).toBe(true)
      expect(await stores.providerLinks.find('google', link.subject)).toBeNull()
      const other = await created()
      expect(await stores.providerLinks.link({ ...link, userId: other.id })).toBe('linked')
    })
  })

  describe('TicketStore', () => {
    const newTicket = (overrides: { kind?: 'oauth_state' | 'oauth_exchange'; expiresAt?: number } = {}) => ({
      digest: randomBytes(32).toString('hex'),
      kind: overrides.kind ?? ('oauth_state' as const),
      payload: `sealed.${randomBytes(24).toString('base64url')}`,
      expiresAt: overrides.expiresAt ?? Date.now() + 600_000,
    })

    it('take resolves with the payload once, then null', async () => {
      const ticket = newTicket()
      await stores.tickets.put(ticket)
      expect(await stores.tickets.take(ticket.digest, 'oauth_state', Date.now())).toBe(ticket.payload)
      expect(await stores.tickets.take(ticket.digest, 'oauth_state', Date.now())).toBeNull()
      expect(await stores.tickets.take(randomBytes(32).toString('hex'), 'oauth_state', Date.now())).toBeNull()
    })

    it('a payload of 4 KiB round-trips', async () => {
      const ticket = { ...newTicket({ kind: 'oauth_exchange' }), payload: 'p'.repeat(4096) }
      await stores.tickets.put(ticket)
      expect(await stores.tickets.take(ticket.digest, 'oauth_exchange', Date.now())).toBe(ticket.payload)
    })

    it('another kind takes nothing, and leaves the ticket to its own kind', async () => {
      const ticket = newTicket({ kind: 'oauth_exchange' })
      await stores.tickets.put(ticket)
      expect(await stores.tickets.take(ticket.digest, 'oauth_state', Date.now())).toBeNull()
      expect(await stores.tickets.take(ticket.digest, 'oauth_exchange', Date.now())).toBe(ticket.payload)
    })

    it('a ticket is refused from its expiry on, to the millisecond', async () => {
      const expiresAt = Date.now() + 60_000
      const ticket = newTicket({ expiresAt })
      await stores.tickets.put(ticket)
      expect(await stores.tickets.take(ticket.digest, 'oauth_state', expiresAt)).toBeNull()
      expect(await stores.tickets.take(ticket.digest, 'oauth_state', expiresAt - 1)).toBe(ticket.payload)
    })

    it('of 50 concurrent takes of one ticket exactly one resolves with the payload', async () => {
      const ticket = newTicket()
      await stores.tickets.put(ticket)
      const results = await Promise.all(
        Array.from({ length: 50 }, () => stores.tickets.take(ticket.digest, 'oauth_state', Date.now())),
      )
      expect(results.filter((result) => result === ticket.payload)).toHaveLength(1)
      expect(results.filter((result) => result === null)).toHaveLength(49)
    })

    it('prune removes the tickets expired at or before now, in batches, and only those', async () => {
      // far in the past, so that no other test's ticket is due for pruning
      const expiresAt = 2_000_000
      expect(await stores.tickets.prune(expiresAt)).toBe(0)
      // more than one pruning batch (1,000)
      const expired = Array.from({ length: 1_050 }, (_, i) => newTicket({ expiresAt: expiresAt - i }))
      const kept = newTicket({ expiresAt: expiresAt + 1 })
      // a few at a time: a thousand at once would wait for the pool longer than a storage call may on a loaded machine
      const all = [...expired, kept]
      for (let start = 0; start < all.length; start += 25) {
        await Promise.all(all.slice(start, start + 25).map((ticket) => stores.tickets.put(ticket)))
      }
      expect(await stores.tickets.prune(expiresAt)).toBe(expired.length)
      expect(await stores.tickets.prune(expiresAt)).toBe(0)
      // gone, not only refused: taken before their expiry they are not there
      expect(await stores.tickets.take(expired[0]?.digest ?? '', 'oauth_state', expiresAt - 5_000)).toBeNull()
      expect(await stores.tickets.take(kept.digest, 'oauth_state', expiresAt)).toBe(kept.payload)
    })
  })
})
