import { Webhook } from 'standardwebhooks'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Account } from '../../src/auth/account.js'
import { StorageError, WriteOutcomeUnknownError } from '../../src/errors.js'
import type { WebhookEvent } from '../../src/webhooks/webhook-event.js'
import { urlDigest } from '../../src/webhooks/webhook-urls.js'
import type { ReceivedWebhook } from '../support/webhook-receiver.js'
import { openWebhookHarness, PREVIOUS_SECRET, SECRET, type WebhookHarness } from './webhook-harness.js'

// docs/api.md §6.5: events signed as Standard Webhooks defines, checked by the specification's own verifier (the
// `standardwebhooks` package's Webhook.verify), posted to real receivers on 127.0.0.1, from the outbox's webhook lane.

const WAIT = { timeout: 60_000, interval: 50 }

const account = (id: string, overrides: Partial<Account> = {}): Account => ({
  id,
  email: `user-${id}@example.com`,
  emailVerified: true,
  createdAt: '2026-03-01T12:00:00.000Z',
  updatedAt: '2026-03-01T12:00:00.000Z',
  username: null,
  nickname: 'Ann',
  bio: null,
  avatarId: null,
  role: 'user',
  status: 'active',
  passwordSet: true,
  providers: [],
  ...overrides,
})

/** One event of each type, with what its body's data must be. */
const EVERY_EVENT: Array<{ event: WebhookEvent; data: unknown }> = [
  {
    event: { type: 'user.created', user: account('1000000001', { avatarId: 'a'.repeat(32) }) },
    data: {
      user: {
        id: '1000000001',
        email: 'user-1000000001@example.com',
        email_verified: true,
        username: null,
        nickname: 'Ann',
        avatar_url: `/avatars/${'a'.repeat(32)}`,
        bio: null,
        role: 'user',
        status: 'active',
        password_set: true,
        providers: [],
        created_at: '2026-03-01T12:00:00.000Z',
        updated_at: '2026-03-01T12:00:00.000Z',
      },
    },
  },
  {
    event: {
      type: 'user.updated',
      user: account('1000000002', { role: 'editor', providers: ['github'] }),
      changes: ['role', 'providers'],
    },
    data: {
      user: expect.objectContaining({ id: '1000000002', role: 'editor', providers: ['github'] }),
      changes: ['role', 'providers'],
    },
  },
  {
    event: { type: 'user.deleted', user: { id: '1000000003', email: 'gone@example.com' } },
    data: { user: { id: '1000000003', email: 'gone@example.com' } },
  },
  {
    event: { type: 'user.password_changed', userId: '1000000004', reason: 'reset' },
    data: { user_id: '1000000004', reason: 'reset' },
  },
  {
    event: { type: 'user.mfa_changed', userId: '1000000005', factors: ['passkey', 'totp'] },
    data: { user_id: '1000000005', factors: ['passkey', 'totp'] },
  },
  {
    event: { type: 'session.ended', userId: '1000000006', sessionId: 's'.repeat(32), reason: 'revoked' },
    data: { user_id: '1000000006', session_id: 's'.repeat(32), reason: 'revoked' },
  },
]

/** What a receiver got, verified by the specification's verifier under `secret`: the parsed body. */
const verified = (received: ReceivedWebhook, secret = SECRET) =>
  new Webhook(secret).verify(received.body, {
    'webhook-id': String(received.headers['webhook-id']),
    'webhook-timestamp': String(received.headers['webhook-timestamp']),
    'webhook-signature': String(received.headers['webhook-signature']),
  }) as { type: string; timestamp: string; data: unknown }

let harness: WebhookHarness | null = null
const open = async (...options: Parameters<typeof openWebhookHarness>) => {
  harness = await openWebhookHarness(...options)
  return harness
}
afterEach(async () => {
  const lines = harness?.logLines ?? []
  const urls = harness?.receivers.map((receiver) => receiver.url) ?? []
  await harness?.close()
  harness = null
  // R6.5.6: no log line holds a URL
  for (const line of lines) for (const url of urls) expect(line).not.toContain(url.replace(/\/hook-\d+$/, ''))
})

describe('webhook delivery', () => {
  it('R6.5.1 each event type arrives at every URL, signed, with the body {type, timestamp, data}', async () => {
    const h = await open({ receivers: 2 })
    const before = Date.now()
    await h.webhooks.publisher.publish(EVERY_EVENT.map(({ event }) => event))
    h.webhooks.sender.start()
    for (const receiver of h.receivers)
      await vi.waitFor(() => expect(receiver.received).toHaveLength(EVERY_EVENT.length), WAIT)
    for (const receiver of h.receivers) {
      const bodies = receiver.received.map((received) => verified(received))
      for (const { event, data } of EVERY_EVENT) {
        const body = bodies.find((candidate) => candidate.type === event.type)
        expect(body).toEqual({ type: event.type, timestamp: expect.any(String), data })
        expect(Date.parse(body?.timestamp ?? '')).toBeGreaterThanOrEqual(before - 1)
      }
      for (const received of receiver.received) {
        expect(received.headers['content-type']).toBe('application/json')
        expect(received.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/)
        // one signature: no previous secret
        expect(String(received.headers['webhook-signature']).split(' ')).toHaveLength(1)
      }
    }
    // one message per URL: the ids of the two receivers differ, each unique
    const ids = h.receivers.flatMap((receiver) => receiver.received.map((r) => r.headers['webhook-id']))
    expect(new Set(ids).size).toBe(2 * EVERY_EVENT.length)
    expect(h.counts.queued).toEqual([undefined, EVERY_EVENT.length, EVERY_EVENT.length])
    await vi.waitFor(() => expect(h.counts.delivered).toEqual([undefined, 6, 6]), WAIT)
    expect(await h.stores.outbox.stats('webhook')).toEqual({ queued: 0, oldestCreatedAt: null })
  })

  it("R6.5.1 during a rotation each secret signs: a receiver with the previous one verifies too; a stranger's does not", async () => {
    const h = await open({ env: { WEBHOOK_PREVIOUS_SECRETS: PREVIOUS_SECRET } })
    await h.webhooks.publisher.publish([
      { type: 'user.password_changed', userId: '1000000007', reason: 'changed' },
    ])
    h.webhooks.sender.start()
    const [receiver] = h.receivers
    await vi.waitFor(() => expect(receiver?.received).toHaveLength(1), WAIT)
    const received = receiver?.received[0] as ReceivedWebhook
    expect(String(received.headers['webhook-signature']).split(' ')).toHaveLength(2)
    for (const secret of [SECRET, PREVIOUS_SECRET])
      expect(verified(received, secret)).toMatchObject({
        type: 'user.password_changed',
        data: { user_id: '1000000007' },
      })
    const stranger = `whsec_${Buffer.alloc(32, 9).toString('base64')}`
    expect(() => verified(received, stranger)).toThrow(/signature/)
  })

  it('R6.5.2 a receiver down for a while, then up, gets every event; a repeat only with the same webhook-id', async () => {
    const h = await open()
    const [receiver] = h.receivers as [(typeof h.receivers)[number]]
    await receiver.stop()
    const events: WebhookEvent[] = Array.from({ length: 20 }, (_, n) => ({
      type: 'user.mfa_changed',
      userId: String(1_000_000_100 + n),
      factors: ['totp'],
    }))
    for (const event of events) await h.webhooks.publisher.publish([event])
    h.webhooks.sender.start()
    // attempts failed while it was down (a few at a time: the others are put off with them, R6.5.4)
    await vi.waitFor(() => expect(h.counts.failed[1] ?? 0).toBeGreaterThanOrEqual(10), WAIT)
    expect(receiver.received).toHaveLength(0)
    // up again, first answering 503 for a while (an answer, but no 2xx), then 2xx
    await receiver.start()
    receiver.answer(503)
    await vi.waitFor(() => expect(receiver.received.length).toBeGreaterThanOrEqual(5), {
      ...WAIT,
      timeout: 60_000,
    })
    receiver.answer(204)
    await vi.waitFor(
      async () =>
        expect(await h.stores.outbox.stats('webhook')).toEqual({ queued: 0, oldestCreatedAt: null }),
      { ...WAIT, timeout: 120_000 },
    )
    const accepted = receiver.received.filter((received) => received.status === 204)
    expect(
      accepted.map((received) => (verified(received).data as { user_id: string }).user_id).sort(),
    ).toEqual(events.map((event) => (event as { userId: string }).userId).sort())
    // every attempt at one event carried its id and its body: the same text each time
    const byId = new Map<string, Set<string>>()
    for (const received of receiver.received) {
      const id = String(received.headers['webhook-id'])
      byId.set(id, (byId.get(id) ?? new Set()).add(received.body))
    }
    expect(byId.size).toBe(20)
    for (const bodies of byId.values()) expect(bodies.size).toBe(1)
    // accepted once each: the 2xx removed it
    expect(new Set(accepted.map((received) => received.headers['webhook-id'])).size).toBe(accepted.length)
    expect(
      h.logs().some((line) => line.msg === 'a webhook event could not be delivered: tried again later'),
    ).toBe(true)
  }, 240_000)

  it("R6.5.4 a receiver that fails puts off its other events: it takes a slot per retry, and the other URLs' events go meanwhile", async () => {
    const h = await open({
      receivers: 2,
      env: { WEBHOOK_SEND_CONNECTIONS: '1', WEBHOOK_RETRY_SECONDS: '60' },
    })
    const [failing, live] = h.receivers as [ReceivedWebhookReceiver, ReceivedWebhookReceiver]
    failing.answer(503)
    for (let n = 0; n < 10; n++)
      await h.webhooks.publisher.publish([
        { type: 'user.mfa_changed', userId: String(1_000_000_600 + n), factors: ['totp'] },
      ])
    h.webhooks.sender.start()
    await vi.waitFor(() => expect(live.received).toHaveLength(10), WAIT)
    // one post to the failing receiver, whichever of its events came first: the nine others wait for its retry
    expect(failing.received).toHaveLength(1)
    expect(h.counts.failed[1]).toBe(1)
    // a post the live receiver has taken is not yet settled: its event leaves the outbox once the sender reads the 2xx
    await vi.waitFor(async () => expect((await h.stores.outbox.stats('webhook')).queued).toBe(10), WAIT)
    const waiting = await h.stores.outbox.claim('webhook', 'f'.repeat(32), h.clock.now() + 60_000, 0, 100)
    expect(waiting).toHaveLength(10)
    expect(waiting.filter((message) => message.attempts === 0)).toHaveLength(9)
  })

  it('R6.5.5 a 410 disables the URL in the store, once, with webhook_disabled and a warn line; until it is enabled, nothing is sent there', async () => {
    const h = await open({ receivers: 2 })
    const [gone, live] = h.receivers as [ReceivedWebhookReceiver, ReceivedWebhookReceiver]
    gone.answer(410)
    await h.webhooks.publisher.publish([
      { type: 'user.mfa_changed', userId: '1000000201', factors: ['totp'] },
      { type: 'user.mfa_changed', userId: '1000000202', factors: ['totp'] },
    ])
    h.webhooks.sender.start()
    await vi.waitFor(() => expect(live.received).toHaveLength(2), WAIT)
    await vi.waitFor(
      async () =>
        expect(await h.stores.outbox.stats('webhook')).toEqual({ queued: 0, oldestCreatedAt: null }),
      WAIT,
    )
    expect(await h.stores.webhookUrls.disabled()).toEqual([
      { urlDigest: urlDigest(gone.url), disabledAt: expect.any(Number) },
    ])
    // recorded once, whichever of its two events was answered 410 first
    expect(h.events.map(({ at: _, ...event }) => event)).toEqual([
      { type: 'webhook_disabled', userId: null, clientAddress: null, requestId: null, reason: 'url_1' },
    ])
    expect(
      h.logs().filter((line) => line.level === 40 && String(line.msg).includes('410 Gone')),
    ).toHaveLength(1)
    const triedWhileGone = gone.received.length
    expect(triedWhileGone).toBeGreaterThanOrEqual(1)

    // from now on nothing is queued for it (its state read again by the publisher's process)
    await vi.waitFor(() => {
      expect(h.webhooks.publisher.messages([{ type: 'ping' }]).map((message) => message.recipient)).toEqual([
        urlDigest(live.url),
      ])
    }, WAIT)
    await h.webhooks.publisher.publish([
      { type: 'user.mfa_changed', userId: '1000000203', factors: ['totp'] },
    ])
    await vi.waitFor(() => expect(live.received).toHaveLength(3), WAIT)
    expect(gone.received).toHaveLength(triedWhileGone)

    // enabled (tessera webhooks enable): events go there again
    gone.answer(204)
    expect(await h.stores.webhookUrls.enable(urlDigest(gone.url))).toBe(true)
    await vi.waitFor(
      async () => {
        await h.webhooks.publisher.publish([
          { type: 'user.mfa_changed', userId: '1000000204', factors: ['totp'] },
        ])
        expect(gone.received.some((received) => received.status === 204)).toBe(true)
      },
      { ...WAIT, interval: 1_000 },
    )
  })

  it('R6.5.5 an event queued for a URL just disabled elsewhere is removed unsent', async () => {
    const h = await open()
    const [receiver] = h.receivers as [ReceivedWebhookReceiver]
    await h.webhooks.publisher.publish([
      { type: 'user.mfa_changed', userId: '1000000301', factors: ['totp'] },
    ])
    await h.stores.webhookUrls.disable(urlDigest(receiver.url), Date.now())
    h.webhooks.sender.start()
    await vi.waitFor(() => expect(h.counts.dropped[1]).toBe(1), WAIT)
    expect(receiver.received).toHaveLength(0)
    expect(await h.stores.outbox.stats('webhook')).toEqual({ queued: 0, oldestCreatedAt: null })
  })

  it('R6.5.4 an event failing for WEBHOOK_GIVE_UP_HOURS is given up: webhook_dropped (its account, the URL position) and an error line', async () => {
    const h = await open({ env: { WEBHOOK_GIVE_UP_HOURS: '2' } })
    const [receiver] = h.receivers as [ReceivedWebhookReceiver]
    receiver.answer(500)
    await h.webhooks.publisher.publish([
      { type: 'session.ended', userId: '1000000401', sessionId: 'x'.repeat(32), reason: 'logout' },
    ])
    await h.webhooks.sender.deliverDue()
    expect(receiver.received).toHaveLength(1)
    expect(h.counts.failed[1]).toBe(1)
    expect(h.events).toEqual([])
    // an hour and a half later: failed again, still kept
    h.clock.advance(90 * 60_000)
    await h.webhooks.sender.deliverDue()
    expect(receiver.received).toHaveLength(2)
    expect((await h.stores.outbox.stats('webhook')).queued).toBe(1)
    // past two hours since it was queued: the next failure gives it up
    h.clock.advance(31 * 60_000)
    await h.webhooks.sender.deliverDue()
    expect(receiver.received).toHaveLength(3)
    expect(await h.stores.outbox.stats('webhook')).toEqual({ queued: 0, oldestCreatedAt: null })
    expect(h.events.map(({ at: _, ...event }) => event)).toEqual([
      {
        type: 'webhook_dropped',
        userId: '1000000401',
        clientAddress: null,
        requestId: null,
        reason: 'url_1',
      },
    ])
    expect(h.counts.dropped[1]).toBe(1)
    expect(h.logs().find((line) => line.msg === 'a webhook event was given up')).toMatchObject({
      level: 50,
      url: 1,
      type: 'session.ended',
      attempts: 3,
    })
  })

  it('R6.5.2 a publish the store refuses is the 503 write_outcome_unknown of R7.3', async () => {
    const h = await open()
    const failing = vi
      .spyOn(h.stores.outbox, 'enqueueAll')
      .mockRejectedValueOnce(
        new StorageError('outbox.enqueueAll failed', { cause: new Error('SQLITE_BUSY') }),
      )
    await expect(h.webhooks.publisher.publish([{ type: 'ping' }])).rejects.toBeInstanceOf(
      WriteOutcomeUnknownError,
    )
    failing.mockRestore()
    expect(await h.stores.outbox.stats('webhook')).toEqual({ queued: 0, oldestCreatedAt: null })
  })

  it('R6.5.6 a URL with credentials: they are sent as HTTP Basic authentication, and never logged', async () => {
    const h = await open({
      urlOf: (receiver) => receiver.url.replace('http://', 'http://hook-user:s3cr%3At@'),
    })
    const [receiver] = h.receivers as [ReceivedWebhookReceiver]
    receiver.answer(500)
    await h.webhooks.publisher.publish([
      { type: 'user.mfa_changed', userId: '1000000501', factors: ['totp'] },
    ])
    await h.webhooks.sender.deliverDue()
    expect(receiver.received).toHaveLength(1)
    expect(receiver.received[0]?.path).toBe('/hook-1')
    expect(receiver.received[0]?.headers.authorization).toBe(
      `Basic ${Buffer.from('hook-user:s3cr:t').toString('base64')}`,
    )
    // its failure was logged, by the URL's position only
    expect(
      h.logs().find((line) => line.msg === 'a webhook event could not be delivered: tried again later'),
    ).toMatchObject({
      url: 1,
      reason: 'HTTP 500',
    })
    for (const line of h.logLines) {
      expect(line).not.toContain('s3cr')
      expect(line).not.toContain('hook-user')
    }
  })
})

type ReceivedWebhookReceiver = WebhookHarness['receivers'][number]
