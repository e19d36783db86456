import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { toAccount } from '../../src/auth/account.js'
import { createAccountEvents } from '../../src/auth/account-events.js'
import { accountView } from '../../src/auth/account-view.js'
import { systemClock } from '../../src/clock.js'
import { loadConfig } from '../../src/config.js'
import { createLogger } from '../../src/logger.js'
import { createProviderSignIn, type ProviderSignIn } from '../../src/providers/provider-sign-in.js'
import { securityEventRecorder } from '../../src/security-event.js'
import { createSessionService } from '../../src/sessions/session-service.js'
import { newUserRecord } from '../../src/storage/new-user.js'
import { openStores } from '../../src/storage/open-stores.js'
import type { StoredSession, Stores } from '../../src/storage/stores.js'
import { type OpenedWebhooks, openWebhooks } from '../../src/webhooks/open-webhooks.js'
import { type BackendInstance, backends } from '../support/backends.js'
import { uniqueEmail } from '../support/http.js'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js'
import { type Event, expectNoSecrets, sorted, userOf, verify } from './event-service.js'
import { SECRET } from './webhook-harness.js'

// docs/api.md R6.5.9, R6.5.10: the events of sign-in with providers (§4.24), the account made by a provider sign-in,
// an account linked by its address (and taken over when its address was unverified), a provider unlinked. The rules
// of provider-sign-in.ts over the real stores of every backend, with the real publisher and sender of the webhooks
// posting to a real receiver, each delivery verified by the standardwebhooks package.

const offHttp = { clientAddress: null, requestId: null }
const HASH = '$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA'

describe.each(backends)('the webhook events of provider sign-ins [$name]', (backend) => {
  let instance: BackendInstance
  let stores: Stores
  let receiver: WebhookReceiver
  let webhooks: OpenedWebhooks
  let signIn: ProviderSignIn

  beforeAll(async () => {
    receiver = await startWebhookReceiver()
    instance = await backend.setup()
    const config = loadConfig({
      ...instance.env,
      WEBHOOK_URLS: receiver.url,
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_RETRY_SECONDS: '1',
    })
    stores = await openStores(config.storage, systemClock)
    const log = createLogger('silent')
    const sink = { record: () => {} }
    webhooks = await openWebhooks({ config, stores, clock: systemClock, log, events: sink, observer: null })
    webhooks.sender.start()
    const events = createAccountEvents({
      publisher: webhooks.publisher,
      users: stores.users,
      factors: stores.factors,
    })
    signIn = createProviderSignIn({
      users: stores.users,
      links: stores.providerLinks,
      sessions: createSessionService({
        store: stores.sessions,
        users: stores.users,
        clock: systemClock,
        events: sink,
        mode: 'per-device',
        webhooks: events,
      }),
      factors: stores.factors,
      avatars: null,
      mailer: { available: false, queue: async () => {} },
      record: securityEventRecorder(sink, systemClock),
      log,
      clock: systemClock,
      webhooks: events,
    })
  })
  afterAll(async () => {
    await webhooks?.sender.close()
    await stores?.close()
    await instance?.teardown()
    await receiver?.stop()
  })

  const identity = (subject: string, email: string, name: string | null = null) => ({
    subject,
    email,
    emailVerified: true,
    name,
    picture: null,
  })
  /** The events about `userId`, once every event queued so far was delivered. */
  const eventsOf = async (userId: string) => {
    await vi.waitFor(async () => expect((await stores.outbox.stats('webhook')).queued).toBe(0), {
      timeout: 30_000,
      interval: 50,
    })
    return sorted(receiver.received.map(verify).filter((event) => userOf(event) === userId))
  }
  /** The account as GET /auth/me would answer it now (no BASE_PATH here). */
  const view = async (userId: string) => accountView(toAccount((await stores.users.findById(userId))!), '')
  const account = async (emailVerified: boolean) => {
    const user = newUserRecord({
      id: String(5_000_000_000 + Math.floor(Math.random() * 4_000_000_000)),
      email: uniqueEmail(),
      passwordHash: HASH,
      emailVerified,
      createdAt: new Date().toISOString(),
    })
    expect(await stores.users.create(user)).toBe('created')
    return user
  }
  const session = (userId: string): StoredSession => {
    const now = Date.now()
    return {
      id: `${userId}${now}`.padEnd(32, '0').slice(0, 32),
      userId,
      digest: `${userId}${now}`.padEnd(64, 'f').slice(0, 64),
      expiresAt: now + 3_600_000,
      createdAt: now,
      lastUsedAt: now,
      device: 'Firefox on Linux',
      clientAddress: null,
      previousDigest: null,
      rotatedAt: null,
      secondFactor: false,
    }
  }

  it('R6.5.9 an account made by a provider sign-in: user.created with its provider and name', async () => {
    const result = await signIn.resolve(
      'github',
      identity(`made-${Date.now()}`, uniqueEmail(), 'Ada L.'),
      offHttp,
    )
    if (!('user' in result)) throw new Error(`no account: ${result.failure}`)
    expect(result.match).toBe('created')
    const made = await view(result.user.id)
    expect(made).toMatchObject({
      providers: ['github'],
      nickname: 'Ada L.',
      password_set: false,
      email_verified: true,
    })
    expect(await eventsOf(result.user.id)).toEqual([{ type: 'user.created', data: { user: made } }])
  })

  it('R6.5.10 a verified account linked by its address, then unlinked: user.updated names the providers', async () => {
    const user = await account(true)
    const subject = `linked-${Date.now()}`
    const result = await signIn.resolve('google', identity(subject, user.email), offHttp)
    expect(result).toMatchObject({ match: 'linked_by_email' })
    const linked: Event = {
      type: 'user.updated',
      data: { user: await view(user.id), changes: ['providers'] },
    }
    expect((linked.data as any).user.providers).toEqual(['google'])
    expect(await eventsOf(user.id)).toEqual([linked])

    expect(await signIn.unlink(user.id, 'google', offHttp)).toBe('unlinked')
    const unlinked: Event = {
      type: 'user.updated',
      data: { user: await view(user.id), changes: ['providers'] },
    }
    expect((unlinked.data as any).user.providers).toEqual([])
    // a provider not linked: nothing changed, nothing sent
    expect(await signIn.unlink(user.id, 'google', offHttp)).toBe('not_linked')
    expect(await eventsOf(user.id)).toEqual(sorted([linked, unlinked]))
  })

  it("R6.5.10 an unverified account taken over by a provider's address: its claim's events, then the link's", async () => {
    const user = await account(false)
    // an earlier provider of whoever registered it, and a session of theirs
    expect(
      await stores.providerLinks.link({
        provider: 'github',
        subject: `earlier-${Date.now()}`,
        userId: user.id,
        email: user.email,
        createdAt: Date.now(),
      }),
    ).toBe('linked')
    const earlier = session(user.id)
    expect(await stores.sessions.start(earlier, 10, Date.now())).toBe(true)
    const result = await signIn.resolve('google', identity(`takeover-${Date.now()}`, user.email), offHttp)
    expect(result).toMatchObject({ match: 'linked_by_email' })
    const events = await eventsOf(user.id)
    const now = await view(user.id)
    expect(now).toMatchObject({ email_verified: true, password_set: false, providers: ['google'] })
    expect(events).toEqual(
      sorted([
        {
          type: 'user.updated',
          data: {
            user: expect.objectContaining({ id: user.id, email_verified: true, password_set: false }),
            changes: ['verification', 'providers'],
          },
        },
        { type: 'user.password_changed', data: { user_id: user.id, reason: 'claimed' } },
        {
          type: 'session.ended',
          data: { user_id: user.id, session_id: earlier.id, reason: 'address_claimed' },
        },
        { type: 'user.updated', data: { user: now, changes: ['providers'] } },
      ]),
    )
  })

  it('R6.5.1 no body carries a password hash', async () => {
    await eventsOf('none')
    expectNoSecrets(
      receiver.received.map((received) => received.body),
      [HASH],
    )
  })
})
