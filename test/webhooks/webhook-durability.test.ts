import { randomUUID } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { type Backend, type BackendInstance, backends } from '../support/backends.js'
import { fetchJson } from '../support/fetch-json.js'
import { type RunningService, startProcess } from '../support/process.js'
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js'
import {
  type ReceivedWebhook,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../support/webhook-receiver.js'
import { SECRET } from './webhook-harness.js'

// docs/api.md R6.5.2, R6.4.7: the event of an acknowledged change is never lost and is delivered once, through
// process deaths and across instances, beside a mail lane that does not hold it back. Real processes (`tessera
// serve`), real receivers, a real database; every body checked with the specification's verifier.

const WEBHOOK_ENV = { WEBHOOK_SECRET: SECRET, WEBHOOK_RETRY_SECONDS: '1', WEBHOOK_TIMEOUT_SECONDS: '10' }
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const running: RunningService[] = []
const receivers: WebhookReceiver[] = []
const smtpServers: TestSmtpServer[] = []
const instances: BackendInstance[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((service) => service.stop()))
  await Promise.all(receivers.splice(0).map((receiver) => receiver.stop()))
  await Promise.all(smtpServers.splice(0).map((server) => server.stop()))
  await Promise.all(instances.splice(0).map((instance) => instance.teardown()))
})

async function setUp(backend: Backend, env: Record<string, string> = {}) {
  const instance = await backend.setup()
  instances.push(instance)
  const receiver = await startWebhookReceiver()
  receivers.push(receiver)
  const start = async (more: Record<string, string> = {}) => {
    const service = await startProcess({
      ...instance.env,
      ...WEBHOOK_ENV,
      WEBHOOK_URLS: receiver.url,
      ...env,
      ...more,
    })
    running.push(service)
    return service
  }
  return { receiver, start }
}

/** Registers an account for each address on `service`; resolves with their ids, once each answer came. */
async function register(service: RunningService, addresses: readonly string[]): Promise<string[]> {
  const ids: string[] = []
  for (const email of addresses) {
    const reply = await fetchJson(`${service.url}/auth/register`, {
      body: { email, password: 'correct horse 1' },
    })
    expect(reply.status, JSON.stringify(reply.body)).toBe(200)
    ids.push(reply.body.data.id)
  }
  return ids
}

const addressesFor = (count: number, tag: string) =>
  Array.from({ length: count }, (_, i) => `${tag}-${i}-${randomUUID().slice(0, 8)}@example.com`)

/** The verified body of a request the receiver answered 2xx. */
const body = (received: ReceivedWebhook) =>
  new Webhook(SECRET).verify(received.body, {
    'webhook-id': String(received.headers['webhook-id']),
    'webhook-timestamp': String(received.headers['webhook-timestamp']),
    'webhook-signature': String(received.headers['webhook-signature']),
  }) as { type: string; data: { user: { id: string; email: string } } }

/**
 * Waits until an accepted `user.created` came for each of `ids`, then a little longer (a duplicate would come from a
 * second claim of an event already delivered), and checks each came once, and that whatever was posted more than once
 * carried one webhook-id.
 */
async function deliveredOnce(receiver: WebhookReceiver, ids: readonly string[], type = 'user.created') {
  const wanted = new Set(ids)
  const accepted = () =>
    receiver.received
      .filter((received) => received.status < 300)
      .map((received) => ({ received, event: body(received) }))
  await vi.waitFor(
    () => {
      const arrived = new Set(
        accepted()
          .filter(({ event }) => event.type === type)
          .map(({ event }) => event.data.user.id),
      )
      expect([...wanted].filter((id) => !arrived.has(id))).toEqual([])
    },
    { timeout: 90_000, interval: 200 },
  )
  await sleep(1_500)
  const counts = new Map<string, number>()
  const idsOf = new Map<string, Set<string>>()
  for (const { event } of accepted()) {
    if (event.type !== type || !wanted.has(event.data.user.id)) continue
    counts.set(event.data.user.id, (counts.get(event.data.user.id) ?? 0) + 1)
  }
  for (const received of receiver.received) {
    const event = body(received)
    if (event.type !== type) continue
    idsOf.set(
      event.data.user.id,
      (idsOf.get(event.data.user.id) ?? new Set()).add(String(received.headers['webhook-id'])),
    )
  }
  expect(counts.size).toBe(wanted.size)
  expect([...counts.values()].every((count) => count === 1)).toBe(true)
  // every attempt at one account's event, accepted or not, was the same message
  expect([...idsOf.values()].every((webhookIds) => webhookIds.size === 1)).toBe(true)
}

describe('webhooks: no acknowledged change loses its event', () => {
  it('R6.5.2 kill -9 right after 100 acknowledged registrations while the receiver is down: every user.created arrives once after both restart', async () => {
    const { receiver, start } = await setUp(backends[0] as Backend)
    await receiver.stop()
    const first = await start()
    const ids = await register(first, addressesFor(100, 'killed'))
    first.child.kill('SIGKILL')
    await new Promise((resolve) => first.child.once('exit', resolve))
    expect(receiver.received).toHaveLength(0)

    await receiver.start()
    await start()
    // what the killed process held is claimed again once its lease (15 s) has run out
    await deliveredOnce(receiver, ids)
  }, 150_000)

  it('R6.5.2 the user.deleted of an account deleted by its owner arrives, though its queued mail is gone', async () => {
    const { receiver, start } = await setUp(backends[0] as Backend)
    const service = await start()
    const email = addressesFor(1, 'deleted')[0] as string
    const login = await fetchJson(`${service.url}/auth/register`, {
      body: { email, password: 'correct horse 1' },
    })
    expect(login.status).toBe(200)
    const deleted = await fetchJson(`${service.url}/auth/delete`, {
      body: { password: 'correct horse 1' },
      token: login.body.data.access_token,
    })
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200)
    await vi.waitFor(
      () => {
        const events = receiver.received.map(body)
        expect(events.find((event) => event.type === 'user.deleted')?.data).toEqual({
          user: { id: login.body.data.id, email },
        })
      },
      { timeout: 30_000, interval: 100 },
    )
  }, 60_000)

  const postgres = backends.find((backend) => backend.name === 'postgres')
  it.skipIf(postgres === undefined)(
    'R6.5.2 two instances on PostgreSQL deliver 200 events: each arrives exactly once',
    async () => {
      const { receiver, start } = await setUp(postgres as Backend)
      const [one, two] = await Promise.all([start(), start()])
      const addresses = addressesFor(200, 'shared')
      // both instances queue at once, and both senders compete for every event
      const [first, second] = await Promise.all([
        register(one as RunningService, addresses.slice(0, 100)),
        register(two as RunningService, addresses.slice(100)),
      ])
      await deliveredOnce(receiver, [...first, ...second])
      // and the two senders together delivered 200 times: no event was posted by both
      const delivered = (service: RunningService) =>
        service.stdout.filter((line) => line.includes('"webhook event delivered"')).length
      expect(delivered(one as RunningService) + delivered(two as RunningService)).toBe(200)
    },
    150_000,
  )
})

describe('R6.4.7 the lanes of the one delivery queue', () => {
  const MAIL_ENV = {
    MAIL_SEND_TIMEOUT_SECONDS: '30',
    MAIL_RETRY_SECONDS: '1',
    EMAIL_CODE_HOURLY_LIMIT: '10000',
  }
  const sendCode = async (service: RunningService, email: string) => {
    const reply = await fetchJson(`${service.url}/auth/email/send-code`, {
      body: { email, purpose: 'register' },
    })
    expect(reply.status).toBe(200)
  }

  it('a slow mail server holds no event back', async () => {
    // each reply of the relay takes 1.5 s: a mail takes several seconds on the one connection
    const smtp = await startSmtpServer({ replyDelayMs: 1_500 })
    smtpServers.push(smtp)
    const { receiver, start } = await setUp(backends[0] as Backend, {
      ...MAIL_ENV,
      SMTP_URL: smtp.url,
      MAIL_SEND_CONNECTIONS: '1',
    })
    const service = await start()
    const mailed = addressesFor(20, 'backlog')
    for (const email of mailed) await sendCode(service, email)
    // then changes whose events go to a receiver that answers at once
    const ids = await register(service, addressesFor(10, 'quick'))
    await deliveredOnce(receiver, ids)
    // every event arrived while most of the mail still waited for the slow relay
    expect(smtp.messages.length).toBeLessThan(mailed.length / 2)
  }, 150_000)

  it('a slow receiver holds no mail back', async () => {
    const smtp = await startSmtpServer()
    smtpServers.push(smtp)
    const { receiver, start } = await setUp(backends[0] as Backend, {
      ...MAIL_ENV,
      SMTP_URL: smtp.url,
      WEBHOOK_SEND_CONNECTIONS: '1',
      WEBHOOK_TIMEOUT_SECONDS: '30',
    })
    // each event takes the receiver 10 s to answer, one at a time
    receiver.answer(204, 10_000)
    const service = await start()
    await register(service, addressesFor(5, 'slow-receiver'))
    const [email] = addressesFor(1, 'mailed')
    await sendCode(service, email as string)
    await smtp.next((mail) => mail.to.includes(email as string), 60_000)
    // the mail left while most of the events still waited for the slow receiver
    expect(receiver.received.length).toBeLessThan(3)
  }, 120_000)
})
