import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { systemClock } from '../../src/clock.js'
import { loadConfig } from '../../src/config.js'
import { createProviderSignIn, type ProviderSignIn } from '../../src/providers/provider-sign-in.js'
import { type SecurityEvent, securityEventRecorder } from '../../src/security-event.js'
import { createSessionService } from '../../src/sessions/session-service.js'
import { newUserRecord } from '../../src/storage/new-user.js'
import { openStores } from '../../src/storage/open-stores.js'
import type { Stores } from '../../src/storage/stores.js'
import { type BackendInstance, backends } from '../support/backends.js'
import { uniqueEmail } from '../support/http.js'

// docs/api.md §4.24: which account a provider account signs in to, with concurrent sign-ins, over the real stores

const offHttp = { clientAddress: null, requestId: null }

describe.each(backends.filter((backend) => !backend.redis))('provider sign-in rules [$name]', (backend) => {
  let instance: BackendInstance
  let stores: Stores
  let signIn: ProviderSignIn
  const events: SecurityEvent[] = []
  const noLog = { warn: () => {}, error: () => {} }

  beforeAll(async () => {
    instance = await backend.setup()
    stores = await openStores(loadConfig(instance.env).storage, systemClock)
    const sink = { record: (event: SecurityEvent) => void events.push(event) }
    signIn = createProviderSignIn({
      users: stores.users,
      links: stores.providerLinks,
      sessions: createSessionService({
        store: stores.sessions,
        users: stores.users,
        clock: systemClock,
        events: sink,
        mode: 'single',
      }),
      factors: stores.factors,
      avatars: null,
      mailer: { available: false, queue: async () => {} },
      record: securityEventRecorder(sink, systemClock),
      log: noLog,
      clock: systemClock,
    })
  })
  afterAll(async () => {
    await stores?.close()
    await instance?.teardown()
  })

  const identity = (subject: string, email: string, emailVerified = true) => ({
    subject,
    email,
    emailVerified,
    name: null,
    picture: null,
  })
  const eventsOf = (userId: string) =>
    events.filter((event) => event.userId === userId).map((event) => [event.type, event.reason])

  it('signs concurrent first sign-ins of one provider account in to one new account', async () => {
    const email = uniqueEmail()
    const results = await Promise.all(
      Array.from({ length: 6 }, () => signIn.resolve('google', identity('concurrent-1', email), offHttp)),
    )
    const ids = new Set(results.map((result) => ('user' in result ? result.user.id : result.failure)))
    expect(ids.size).toBe(1)
    const [id] = [...ids]
    expect(id).toMatch(/^[1-9]\d{9}$/)
    expect(results.filter((result) => 'match' in result && result.match === 'created')).toHaveLength(1)
    expect(await stores.providerLinks.find('google', 'concurrent-1')).toMatchObject({ userId: id, email })
    expect(eventsOf(String(id))).toContainEqual(['registered', 'provider'])
  })

  it("takes over an unverified account by a vouched-for address, recorded as the address's claim and a link", async () => {
    const email = uniqueEmail()
    const user = newUserRecord({
      id: '5123456789',
      email,
      passwordHash: '$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA',
      emailVerified: false,
      createdAt: new Date().toISOString(),
    })
    expect(await stores.users.create(user)).toBe('created')
    const result = await signIn.resolve('github', identity('takeover-1', email), offHttp)
    expect(result).toMatchObject({
      match: 'linked_by_email',
      user: { id: user.id, emailVerified: true, passwordHash: null },
    })
    expect(await stores.users.findById(user.id)).toMatchObject({
      emailVerified: true,
      passwordHash: null,
      providers: ['github'],
    })
    expect(eventsOf(user.id)).toEqual([
      ['email_verified', 'claimed'],
      ['provider_linked', null],
    ])
  })

  it('refuses a disabled account, linked or found by its address', async () => {
    const email = uniqueEmail()
    const created = await signIn.resolve('google', identity('disabled-1', email), offHttp)
    if (!('user' in created)) throw new Error('not created')
    await stores.users.setStatus(created.user.id, 'disabled', new Date().toISOString())
    expect(await signIn.resolve('google', identity('disabled-1', email), offHttp)).toEqual({
      failure: 'failed',
    })
    expect(await signIn.resolve('github', identity('disabled-2', email), offHttp)).toEqual({
      failure: 'failed',
    })
    expect(eventsOf(created.user.id).filter(([type]) => type === 'login_failed')).toEqual([
      ['login_failed', 'disabled'],
      ['login_failed', 'disabled'],
    ])
  })

  const family = '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}'
  it.each([
    ['a right-to-left override', 'admin\u202Egnp.exe', 'admingnp.exe'],
    ['isolates around the name', '\u2066 Grace \u2069', 'Grace'],
    [
      'a joiner between letters, kept between emoji',
      `Ada\u200D Lovelace ${family}`,
      `Ada Lovelace ${family}`,
    ],
    ['invisible characters only', '\u200B\u3164\u2060\uFEFF\u200B', null],
    [
      'a joiner the cut to 64 characters leaves at the end',
      `${'x'.repeat(62)}${family}`,
      `${'x'.repeat(62)}\u{1F468}`,
    ],
  ])(
    'R4.24 a new account takes the provider name with %s, cleaned, as its nickname',
    async (_what, name, nickname) => {
      const subject = `hidden-${Math.random().toString(36).slice(2)}`
      const result = await signIn.resolve('google', { ...identity(subject, uniqueEmail()), name }, offHttp)
      if (!('user' in result)) throw new Error('not created')
      expect(result.match).toBe('created')
      expect(result.user.nickname).toBe(nickname)
      expect((await stores.users.findById(result.user.id))?.nickname).toBe(nickname)
    },
  )

  it('unlinks, unless it is the only way in', async () => {
    const created = await signIn.resolve('google', identity('unlink-1', uniqueEmail()), offHttp)
    if (!('user' in created)) throw new Error('not created')
    const { id } = created.user
    expect(await signIn.unlink(id, 'google', offHttp)).toBe('only_way_in')
    expect(await signIn.resolve('github', identity('unlink-2', created.user.email), offHttp)).toMatchObject({
      user: { id, providers: ['github', 'google'] },
    })
    expect(await signIn.unlink(id, 'google', offHttp)).toBe('unlinked')
    expect(await signIn.unlink(id, 'google', offHttp)).toBe('not_linked')
    expect(eventsOf(id)).toContainEqual(['provider_unlinked', null])
  })
})
