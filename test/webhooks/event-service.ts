import { Webhook } from 'standardwebhooks'
import { expect, vi } from 'vitest'
import { type UserAdmin, userAdminOn } from '../../src/auth/user-admin.js'
import { systemClock } from '../../src/clock.js'
import type { Config } from '../../src/config.js'
import type { Stores } from '../../src/storage/stores.js'
import { commandAccountEvents } from '../../src/webhooks/command-account-events.js'
import type { Backend, BackendInstance } from '../support/backends.js'
import { bearer, type Call, call, type Reply } from '../support/http.js'
import { emlMailbox, type Mailbox } from '../support/mailbox.js'
import { startTestService, type TestService } from '../support/test-service.js'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js'
import { SECRET } from './webhook-harness.js'

/** An event as a receiver got it: verified with the Standard Webhooks verifier, then parsed. */
export interface Delivered {
  type: string
  timestamp: string
  data: any
  /** The raw body, as posted. */
  body: string
  webhookId: string
}

/** An event's type and data, what a test compares. */
export interface Event {
  type: string
  data: unknown
}

const WAIT = { timeout: 30_000, interval: 50 }

/**
 * The body of a delivery, checked by the `standardwebhooks` package's own verifier (Webhook.verify), an implementation
 * that is not the service's: it throws unless the signature of WEBHOOK_SECRET and a current timestamp are there.
 */
export function verify(received: WebhookReceiver['received'][number]): Delivered {
  const headers = {
    'webhook-id': String(received.headers['webhook-id']),
    'webhook-timestamp': String(received.headers['webhook-timestamp']),
    'webhook-signature': String(received.headers['webhook-signature']),
  }
  const event = new Webhook(SECRET).verify(received.body, headers) as Omit<Delivered, 'body' | 'webhookId'>
  expect(Object.keys(event)).toEqual(['type', 'timestamp', 'data'])
  expect(event.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  return { ...event, body: received.body, webhookId: headers['webhook-id'] }
}

/** The account an event is about: `data.user.id` or `data.user_id`. */
export const userOf = (event: Delivered): string | undefined => event.data.user?.id ?? event.data.user_id

/** Events in one order whatever the order they came in (a receiver orders them by `timestamp`, R6.5.2). */
export const sorted = (events: readonly Event[]): Event[] =>
  events
    .map((event) => ({ type: event.type, data: event.data }))
    .toSorted((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))

/**
 * Every field of a body, at any depth, that is not an account's public field: a body has no field named as a password,
 * a hash, a token, a code or a secret (`password_set`, the account's boolean, is its public view).
 */
export function forbiddenKeys(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(forbiddenKeys)
  if (value === null || typeof value !== 'object') return []
  return Object.entries(value).flatMap(([key, inner]) => [
    ...(key !== 'password_set' && /password|hash|token|code|secret|digest/i.test(key) ? [key] : []),
    ...forbiddenKeys(inner),
  ])
}

/**
 * Checks every raw body a receiver got: none holds any of `secrets` (the passwords, tokens and codes a test used) nor
 * an Argon2 hash, and none has a field named as one.
 */
export function expectNoSecrets(bodies: readonly string[], secrets: readonly string[]): void {
  expect(bodies.length).toBeGreaterThan(0)
  for (const body of bodies) {
    expect(body).not.toContain('$argon2')
    for (const secret of secrets) expect(body, `a body carries ${secret}`).not.toContain(secret)
    expect(forbiddenKeys(JSON.parse(body))).toEqual([])
  }
}

/** The service (createService) on a backend, posting its webhook events to a real receiver on 127.0.0.1. */
export interface EventService {
  service: TestService
  instance: BackendInstance
  receiver: WebhookReceiver
  mailbox: Mailbox
  config: Config
  stores: Stores
  call(method: string, url: string, options?: Call): Promise<Reply>
  /** Every delivery so far, each verified (a delivery that does not verify fails the test). */
  delivered(): Delivered[]
  /** Waits until every event queued so far was delivered (the outbox's webhook lane is empty): the deliveries. */
  settled(): Promise<Delivered[]>
  /** The events about `userId` once every event queued so far was delivered, in `sorted` order. */
  eventsOf(userId: string): Promise<Event[]>
  /** The account acts of `tessera users` and the admin API, with their webhook events as `tessera users` has them. */
  admin(): Promise<UserAdmin>
  /** GET /auth/me with `token`: what `data.user` of a `user.*` event must equal. */
  me(token: string): Promise<unknown>
  close(): Promise<void>
}

export async function startEventService(
  backend: Backend,
  env: Record<string, string> = {},
  wrapStores?: (stores: Stores) => Stores,
): Promise<EventService> {
  const receiver = await startWebhookReceiver()
  const instance = await backend.setup()
  try {
    const service = await startTestService(backend, {
      instance,
      env: { WEBHOOK_URLS: receiver.url, WEBHOOK_SECRET: SECRET, WEBHOOK_RETRY_SECONDS: '1', ...env },
      ...(wrapStores === undefined ? {} : { wrapStores }),
    })
    const mailbox = emlMailbox(instance.env.DATA_DIR as string)
    const delivered = () => receiver.received.map(verify)
    const settled = async () => {
      await vi.waitFor(
        async () => expect((await service.stores.outbox.stats('webhook')).queued).toBe(0),
        WAIT,
      )
      return delivered()
    }
    return {
      service,
      instance,
      receiver,
      mailbox,
      config: service.config,
      stores: service.stores,
      call: (method, url, options) => call(service.app, method, url, options),
      delivered,
      settled,
      async eventsOf(userId) {
        return sorted((await settled()).filter((event) => userOf(event) === userId))
      },
      async admin() {
        const { stores, config } = service
        return userAdminOn(
          stores,
          config,
          systemClock,
          await commandAccountEvents(config, stores, systemClock),
        )
      },
      async me(token) {
        const reply = await call(service.app, 'GET', '/auth/me', { headers: bearer(token) })
        expect(reply.status, reply.text).toBe(200)
        return reply.body.data
      },
      async close() {
        await service.close()
        await mailbox.close()
        await instance.teardown()
        await receiver.stop()
      },
    }
  } catch (error) {
    await instance.teardown()
    await receiver.stop()
    throw error
  }
}
