import { createHash, randomBytes } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import type { NewOutboxMessage, OutboxLane, Stores } from '../../src/storage/stores.js'
import { backends } from '../support/backends.js'
import { contractAccounts, useContractStores } from './contract-setup.js'

/**
 * The contract of the outbox as one delivery queue with two lanes, and of the disabled webhook URLs (migration 0012),
 * on every backend, against real servers: always in the SQL database.
 */
describe.each(backends)('webhook storage contract [$name]', (backend) => {
  let stores: Stores
  useContractStores(backend, (opened) => {
    stores = opened.stores
  })
  const accounts = contractAccounts('webhook-contract', () => stores)

  const id = () => randomBytes(16).toString('hex')
  const claimant = () => randomBytes(16).toString('hex')
  const urlDigest = () => createHash('sha256').update(`https://${id()}.example/hook`).digest('hex')
  let serial = 0
  const address = () => `lane-${Date.now()}-${serial++}@example.com`

  const event = (createdAt: number, overrides: Partial<NewOutboxMessage> = {}): NewOutboxMessage => ({
    id: id(),
    lane: 'webhook',
    userId: null,
    recipient: urlDigest(),
    payload: JSON.stringify({ type: 'user.created', timestamp: new Date(createdAt).toISOString(), data: {} }),
    createdAt,
    codeExpiresAt: null,
    ...overrides,
  })
  const mail = (createdAt: number, overrides: Partial<NewOutboxMessage> = {}): NewOutboxMessage => ({
    id: id(),
    lane: 'mail',
    userId: null,
    recipient: address(),
    payload: `sealed.${randomBytes(24).toString('base64url')}`,
    createdAt,
    codeExpiresAt: null,
    ...overrides,
  })
  const waiting = (message: NewOutboxMessage) => ({
    ...message,
    attempts: 0,
    nextAttemptAt: message.createdAt,
  })

  /** Every test leaves both lanes empty: what it queued is claimed (far in the future) and removed. */
  afterEach(async () => {
    for (const lane of ['mail', 'webhook'] as OutboxLane[]) {
      const holder = claimant()
      for (const message of await stores.outbox.claim(lane, holder, Number.MAX_SAFE_INTEGER, 0, 10_000))
        await stores.outbox.remove(message.id, holder)
    }
  })

  it('a claim takes the messages of its lane only, each lane in its own order', async () => {
    const t0 = Date.now()
    const events = [event(t0 - 3_000), event(t0 - 1_000), event(t0 - 2_000)]
    const mails = [mail(t0 - 5_000), mail(t0 - 4_000, { codeExpiresAt: t0 + 600_000 })]
    await stores.outbox.enqueueAll([...events, ...mails])
    const holder = claimant()
    expect(await stores.outbox.claim('webhook', holder, t0, t0 + 60_000, 2)).toEqual([
      waiting(events[0] as NewOutboxMessage),
      waiting(events[2] as NewOutboxMessage),
    ])
    expect(await stores.outbox.claim('mail', claimant(), t0, t0 + 60_000, 10)).toEqual(mails.map(waiting))
    expect(await stores.outbox.claim('webhook', claimant(), t0, t0 + 60_000, 10)).toEqual([
      waiting(events[1] as NewOutboxMessage),
    ])
    // held: neither lane gives anything more until the leases end
    for (const lane of ['mail', 'webhook'] as OutboxLane[])
      expect(await stores.outbox.claim(lane, claimant(), t0, t0 + 60_000, 10)).toEqual([])
    // settled by id as mail is: a failure makes it due again later, in its lane
    await stores.outbox.failed(events[0]?.id as string, holder, t0 + 30_000)
    expect(await stores.outbox.claim('mail', claimant(), t0 + 30_000, t0 + 90_000, 10)).toEqual([])
    expect(await stores.outbox.claim('webhook', claimant(), t0 + 30_000, t0 + 90_000, 10)).toEqual([
      { ...waiting(events[0] as NewOutboxMessage), attempts: 1, nextAttemptAt: t0 + 30_000 },
    ])
  })

  it('enqueueAll commits every message or none', async () => {
    const t0 = Date.now()
    const first = event(t0)
    const duplicate = { ...event(t0), id: first.id }
    await expect(stores.outbox.enqueueAll([event(t0), first, duplicate])).rejects.toThrow()
    expect(await stores.outbox.stats('webhook')).toEqual({ queued: 0, oldestCreatedAt: null })
    await stores.outbox.enqueueAll([event(t0), first])
    expect((await stores.outbox.stats('webhook')).queued).toBe(2)
    await stores.outbox.enqueueAll([])
  })

  it('stats and statsByRecipient count one lane, by recipient', async () => {
    const t0 = Date.now()
    const one = urlDigest()
    const two = urlDigest()
    await stores.outbox.enqueueAll([
      event(t0 - 9_000, { recipient: one }),
      event(t0 - 4_000, { recipient: one }),
      event(t0 - 2_000, { recipient: two }),
      mail(t0 - 60_000),
    ])
    expect(await stores.outbox.stats('webhook')).toEqual({ queued: 3, oldestCreatedAt: t0 - 9_000 })
    expect(await stores.outbox.stats('mail')).toEqual({ queued: 1, oldestCreatedAt: t0 - 60_000 })
    expect(await stores.outbox.statsByRecipient('webhook')).toEqual(
      new Map([
        [one, { queued: 2, oldestCreatedAt: t0 - 9_000 }],
        [two, { queued: 1, oldestCreatedAt: t0 - 2_000 }],
      ]),
    )
  })

  it("postpone puts off a recipient's unheld messages of one lane, no attempt counted, none brought forward", async () => {
    const t0 = Date.now()
    const target = urlDigest()
    const [held, waitingOne, later, other] = [
      event(t0 - 4_000, { recipient: target }),
      event(t0 - 3_000, { recipient: target }),
      // due only after the postponement already (queued to be due then)
      event(t0 + 90_000, { recipient: target }),
      event(t0 - 1_000),
    ] as [NewOutboxMessage, NewOutboxMessage, NewOutboxMessage, NewOutboxMessage]
    const sameAddress = mail(t0 - 5_000, { recipient: target })
    await stores.outbox.enqueueAll([held, waitingOne, later, other, sameAddress])
    const holder = claimant()
    expect(await stores.outbox.claim('webhook', holder, t0, t0 + 60_000, 1)).toEqual([waiting(held)])
    expect(await stores.outbox.postpone('webhook', target, t0 + 30_000, t0)).toBe(1)
    expect(await stores.outbox.claim('webhook', claimant(), t0, t0 + 60_000, 10)).toEqual([waiting(other)])
    expect(await stores.outbox.claim('mail', claimant(), t0, t0 + 60_000, 10)).toEqual([waiting(sameAddress)])
    expect(await stores.outbox.claim('webhook', claimant(), t0 + 30_000, t0 + 90_000, 10)).toEqual([
      { ...waiting(waitingOne), nextAttemptAt: t0 + 30_000 },
    ])
    // the held one is its claimant's still; the later one kept its time
    expect(await stores.outbox.remove(held.id, holder)).toBe(true)
    // (the others' leases have ended by then: they come again too)
    const atLast = await stores.outbox.claim('webhook', claimant(), t0 + 90_000, t0 + 120_000, 10)
    expect(atLast.find((message) => message.id === later.id)).toEqual(waiting(later))
  })

  it("R6.5.3 deleteFor removes an account's mail, never an event, whatever it names", async () => {
    const t0 = Date.now()
    const user = await accounts.created()
    const events = [
      event(t0, { userId: user.id }),
      // an event's recipient is a digest: should one ever equal the address, it is still kept
      event(t0, { recipient: user.email }),
      event(t0),
    ]
    await stores.outbox.enqueueAll([
      ...events,
      mail(t0, { userId: user.id }),
      mail(t0, { recipient: user.email }),
    ])
    expect(await stores.outbox.deleteFor(user.id, user.email)).toBe(2)
    expect(await stores.outbox.stats('mail')).toEqual({ queued: 0, oldestCreatedAt: null })
    expect((await stores.outbox.stats('webhook')).queued).toBe(3)
  })

  it("users.delete queues the deletion's messages in its transaction, only when it deletes the account", async () => {
    const t0 = Date.now()
    const user = await accounts.created()
    const reported = [event(t0), event(t0)]
    expect(await stores.users.delete(user.id, { outbox: reported })).toBe(true)
    expect(await stores.users.findById(user.id)).toBeNull()
    expect(await stores.outbox.claim('webhook', claimant(), t0, t0 + 60_000, 10)).toEqual(
      expect.arrayContaining(reported.map(waiting)),
    )
    // no account: nothing deleted, nothing queued
    expect(await stores.users.delete(user.id, { outbox: [event(t0)] })).toBe(false)
    expect(await stores.outbox.claim('webhook', claimant(), t0, t0 + 60_000, 10)).toEqual([])
  })

  it('users.delete under the last-admin rule queues its messages only when the rule lets it delete', async () => {
    const t0 = Date.now()
    const role = `keep-${Math.random().toString(36).slice(2, 12)}`
    const [first, second] = [await accounts.created(), await accounts.created()]
    for (const user of [first, second]) await stores.users.setRole(user.id, role, new Date(t0).toISOString())
    const allowed = event(t0)
    expect(await stores.users.delete(first.id, { keep: role, outbox: [allowed] })).toBe(true)
    // the last active account with the role: refused, and nothing queued in its transaction
    expect(await stores.users.delete(second.id, { keep: role, outbox: [event(t0)] })).toBe(false)
    expect(await stores.users.findById(second.id)).not.toBeNull()
    expect(await stores.outbox.claim('webhook', claimant(), t0, t0 + 60_000, 10)).toEqual([waiting(allowed)])
  })

  it('of concurrent deletions of one account, one deletes it and queues its messages', async () => {
    const t0 = Date.now()
    const user = await accounts.created()
    const attempts = Array.from({ length: 5 }, () => event(t0))
    const results = await Promise.all(
      attempts.map((message) => stores.users.delete(user.id, { outbox: [message] })),
    )
    expect(results.filter(Boolean)).toHaveLength(1)
    const queued = await stores.outbox.claim('webhook', claimant(), t0, t0 + 60_000, 10)
    expect(queued).toEqual([waiting(attempts[results.indexOf(true)] as NewOutboxMessage)])
  })

  describe('WebhookUrlStore', () => {
    it('disable records a URL once; disabled lists it; enable removes it', async () => {
      const digest = urlDigest()
      const other = urlDigest()
      const t0 = Date.now()
      expect(await stores.webhookUrls.disable(digest, t0)).toBe(true)
      expect(await stores.webhookUrls.disable(digest, t0 + 5_000)).toBe(false)
      expect(await stores.webhookUrls.disable(other, t0 + 1_000)).toBe(true)
      expect(await stores.webhookUrls.disabled()).toEqual(
        expect.arrayContaining([
          { urlDigest: digest, disabledAt: t0 },
          { urlDigest: other, disabledAt: t0 + 1_000 },
        ]),
      )
      expect(await stores.webhookUrls.enable(digest)).toBe(true)
      expect(await stores.webhookUrls.enable(digest)).toBe(false)
      const left = (await stores.webhookUrls.disabled()).map((row) => row.urlDigest)
      expect(left).toContain(other)
      expect(left).not.toContain(digest)
      await stores.webhookUrls.enable(other)
    })

    it('of concurrent disables of one URL, one is the first', async () => {
      const digest = urlDigest()
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, n) => stores.webhookUrls.disable(digest, Date.now() + n)),
      )
      expect(results.filter(Boolean)).toHaveLength(1)
      await stores.webhookUrls.enable(digest)
    })
  })
})
