import { afterEach, describe, expect, it, vi } from 'vitest'
import { type BackendInstance, backends } from '../support/backends.js'
import { uniqueEmail } from '../support/http.js'
import { type RunningService, startProcess } from '../support/process.js'
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js'
import { type Delivered, verify } from './event-service.js'
import { SECRET } from './webhook-harness.js'

// docs/api.md R6.5.2, R6.5.10: the user.updated of an acknowledged change is queued before its answer, so a process
// killed (kill -9) right after 100 acknowledged profile updates, while the receiver is down, loses none of their
// events: once the service is started again and the receiver is up, each of the 100 arrives, checked by the
// standardwebhooks verifier. The built service (`tessera serve`) as a child process, on every backend.

const running: RunningService[] = []
const receivers: WebhookReceiver[] = []
const instances: BackendInstance[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((service) => service.stop()))
  await Promise.all(receivers.splice(0).map((receiver) => receiver.stop()))
  await Promise.all(instances.splice(0).map((instance) => instance.teardown()))
})

/** A JSON request to the service; its status and body. */
async function send(service: RunningService, method: string, path: string, body: unknown, token?: string) {
  const response = await fetch(`${service.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  })
  return { status: response.status, body: (await response.json()) as any }
}

describe.each(backends)('webhook events survive kill -9 [$name]', (backend) => {
  it('R6.5.2 kill -9 right after 100 acknowledged profile updates: after a restart the receiver gets all 100', async () => {
    const instance = await backend.setup()
    instances.push(instance)
    const receiver = await startWebhookReceiver()
    receivers.push(receiver)
    const env = {
      ...instance.env,
      WEBHOOK_URLS: receiver.url,
      WEBHOOK_SECRET: SECRET,
      WEBHOOK_RETRY_SECONDS: '1',
      RATE_LIMIT_PER_MINUTE: '0',
    }
    // down before the first event: nothing is delivered before the kill, every event waits in the outbox
    await receiver.stop()
    const first = await startProcess(env)
    running.push(first)
    const registered = await send(first, 'POST', '/auth/register', {
      email: uniqueEmail(),
      password: 'correct horse battery',
    })
    expect(registered.status, JSON.stringify(registered.body)).toBe(200)
    const { id, access_token: token } = registered.body.data
    const nicknames = Array.from({ length: 100 }, (_, n) => `Nick ${n}`)
    for (const nickname of nicknames) {
      const updated = await send(first, 'PUT', '/auth/profile', { nickname }, token)
      expect(updated.status, JSON.stringify(updated.body)).toBe(200)
    }
    first.child.kill('SIGKILL')
    await new Promise((resolve) => first.child.once('exit', resolve))
    expect(receiver.received).toHaveLength(0)

    await receiver.start()
    running.push(await startProcess(env))
    // what the killed process held is claimed again once its lease (15 s) has run out
    const updates = () =>
      receiver.received
        .map(verify)
        .filter((event: Delivered) => event.type === 'user.updated' && event.data.user.id === id)
    await vi.waitFor(
      () => {
        const arrived = new Set(updates().map((event) => event.data.user.nickname))
        expect(nicknames.filter((nickname) => !arrived.has(nickname))).toEqual([])
      },
      { timeout: 120_000, interval: 250 },
    )
    for (const event of updates()) expect(event.data.changes).toEqual(['profile'])
    // a repeat, if any, is the same message: one webhook-id per nickname
    const ids = new Map<string, Set<string>>()
    for (const event of updates())
      ids.set(event.data.user.nickname, (ids.get(event.data.user.nickname) ?? new Set()).add(event.webhookId))
    expect([...ids.values()].every((set) => set.size === 1)).toBe(true)
  }, 240_000)
})
