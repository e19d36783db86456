import { AsyncLocalStorage } from 'node:async_hooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Stores } from '../../src/storage/stores.js'
import { type Backend, backends } from '../support/backends.js'
import { bearer, call, PASSWORD, type Reply, uniqueEmail } from '../support/http.js'
import { startTestService, type TestService } from '../support/test-service.js'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js'
import { SECRET } from './webhook-harness.js'

// docs/api.md R6.5.13: without WEBHOOK_URLS the events cost nothing (no store call is added to any change: no read of
// the account or its factors, no naming of the sessions ended, nothing queued), and with them a refresh and GET
// /auth/me, the hot paths, make the very calls they make without them. Each request's own store calls are recorded
// (an AsyncLocalStorage marks them: the background senders' calls are not the request's), on every backend.

/** The stores whose every call a request may make. */
const RECORDED = [
  'users',
  'sessions',
  'outbox',
  'factors',
  'providerLinks',
  'avatars',
  'webhookUrls',
] as const

interface Recorded {
  service: TestService
  /** The store calls (`store.method`) the request `run` makes, in order. */
  callsOf(run: (service: TestService) => Promise<Reply>): Promise<string[]>
  close(): Promise<void>
}

async function recordedService(backend: Backend, env: Record<string, string>): Promise<Recorded> {
  const requests = new AsyncLocalStorage<string[]>()
  const record = (stores: Stores): Stores => {
    const wrapped: Record<string, unknown> = { ...stores }
    for (const name of RECORDED) {
      const store = stores[name] as object
      wrapped[name] = new Proxy(store, {
        get(target, key) {
          const value = Reflect.get(target, key)
          if (typeof value !== 'function') return value
          // the outbox's senders, which a request's event wakes, run in its context: of the outbox, what a
          // request itself calls is a queuing
          if (name === 'outbox' && !String(key).startsWith('enqueue')) return value.bind(target)
          return (...args: unknown[]) => {
            requests.getStore()?.push(`${name}.${String(key)}`)
            return value.apply(target, args)
          }
        },
      })
    }
    return wrapped as unknown as Stores
  }
  const service = await startTestService(backend, {
    env: { AUTH_SESSIONS: 'per-device', ...env },
    wrapStores: record,
  })
  return {
    service,
    async callsOf(run) {
      const calls: string[] = []
      const reply = await requests.run(calls, () => run(service))
      expect(reply.status, reply.text).toBe(200)
      return calls
    },
    close: () => service.close(),
  }
}

describe.each(backends)('what the webhook events cost [$name]', (backend) => {
  let receiver: WebhookReceiver
  let off: Recorded
  let on: Recorded

  beforeAll(async () => {
    receiver = await startWebhookReceiver()
    off = await recordedService(backend, {})
    on = await recordedService(backend, { WEBHOOK_URLS: receiver.url, WEBHOOK_SECRET: SECRET })
  })
  afterAll(async () => {
    await off?.close()
    await on?.close()
    await receiver?.stop()
  })

  /** An account on `service` with three sessions: their tokens. */
  const account = async (service: TestService) => {
    const email = uniqueEmail()
    const sessions = []
    const first = await call(service.app, 'POST', '/auth/register', { body: { email, password: PASSWORD } })
    sessions.push(first.body.data)
    for (let n = 0; n < 2; n++)
      sessions.push(
        (await call(service.app, 'POST', '/auth/login', { body: { email, password: PASSWORD } })).body.data,
      )
    return sessions
  }

  it('R6.5.13 a refresh and GET /auth/me make the same store calls with webhooks as without', async () => {
    for (const recorded of [off, on]) {
      const [session] = await account(recorded.service)
      const refreshed = await recorded.callsOf((service) =>
        call(service.app, 'POST', '/auth/refresh', { body: { refresh_token: session.refresh_token } }),
      )
      const me = await recorded.callsOf((service) =>
        call(service.app, 'GET', '/auth/me', { headers: bearer(session.access_token) }),
      )
      expect({ refreshed, me }).toEqual({
        refreshed: ['sessions.rotate'],
        me: ['users.findById'],
      })
    }
  })

  it('R6.5.13 without WEBHOOK_URLS a change adds no store call; with them, only what its events need', async () => {
    const costs = async (recorded: Recorded) => {
      const [a, b] = await account(recorded.service)
      return {
        profile: await recorded.callsOf((service) =>
          call(service.app, 'PUT', '/auth/profile', {
            headers: bearer(a.access_token),
            body: { nickname: 'Ada' },
          }),
        ),
        logoutOthers: await recorded.callsOf((service) =>
          call(service.app, 'POST', '/auth/delete-refresh-token', {
            headers: bearer(b.access_token),
            query: { scope: 'others' },
          }),
        ),
        logout: await recorded.callsOf((service) =>
          call(service.app, 'POST', '/auth/delete-refresh-token', { headers: bearer(b.access_token) }),
        ),
      }
    }
    expect(await costs(off)).toEqual({
      profile: ['sessions.find', 'users.findById', 'users.updateProfile'],
      logoutOthers: ['sessions.find', 'sessions.endAll'],
      logout: ['sessions.end'],
    })
    expect(await costs(on)).toEqual({
      // the account read again for its event, and the event queued
      profile: [
        'sessions.find',
        'users.findById',
        'users.updateProfile',
        'users.findById',
        'outbox.enqueueAll',
      ],
      // the sessions ended named, and their events queued
      logoutOthers: ['sessions.find', 'sessions.endAllReturningIds', 'outbox.enqueueAll'],
      logout: ['sessions.end', 'outbox.enqueueAll'],
    })
  })
})
