import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from 'vitest'
import { type Backend, type BackendInstance, backends } from '../support/backends.js'
import { fetchJson } from '../support/fetch-json.js'
import { type RunningService, startProcess } from '../support/process.js'
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js'

// docs/api.md R6.4.1, R6.4.2: a mail the answer said was sent is never lost and is delivered once, through process
// deaths and across instances. Real processes (`tessera serve`), a real SMTP server, a real database.

/** Short timings: a lease of a few seconds, retries a second apart. */
const MAIL_ENV = {
  MAIL_RETRY_SECONDS: '1',
  MAIL_SEND_TIMEOUT_SECONDS: '1',
  EMAIL_CODE_HOURLY_LIMIT: '10000',
}

/** Asks `service` for a register code for each address (a mail each, whether or not it has an account). */
async function sendCodes(service: RunningService, addresses: readonly string[]): Promise<void> {
  for (const email of addresses) {
    const reply = await fetchJson(`${service.url}/auth/email/send-code`, {
      body: { email, purpose: 'register' },
    })
    expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  }
}

/** Waits until every address got its mail, then a little longer, and counts what each received. */
async function receivedOnce(smtp: TestSmtpServer, addresses: readonly string[], timeoutMs: number) {
  const wanted = new Set(addresses)
  const deadline = Date.now() + timeoutMs
  const arrived = () => new Set(smtp.messages.flatMap((mail) => mail.to).filter((to) => wanted.has(to)))
  while (arrived().size < wanted.size && Date.now() < deadline) await sleep(100)
  // a duplicate would come from a second claim of a message already sent: give it the time to show
  await sleep(1_500)
  const counts = new Map<string, number>()
  for (const mail of smtp.messages) {
    for (const to of mail.to) if (wanted.has(to)) counts.set(to, (counts.get(to) ?? 0) + 1)
  }
  return counts
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const addressesFor = (count: number, tag: string) =>
  Array.from({ length: count }, (_, i) => `${tag}-${i}-${randomUUID().slice(0, 8)}@example.com`)

const running: RunningService[] = []
const servers: TestSmtpServer[] = []
const instances: BackendInstance[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((service) => service.stop()))
  await Promise.all(servers.splice(0).map((server) => server.stop()))
  await Promise.all(instances.splice(0).map((instance) => instance.teardown()))
})

async function setUp(backend: Backend) {
  const instance = await backend.setup()
  instances.push(instance)
  const smtp = await startSmtpServer()
  servers.push(smtp)
  const env = { ...instance.env, ...MAIL_ENV, SMTP_URL: smtp.url }
  const start = async () => {
    const service = await startProcess(env)
    running.push(service)
    return service
  }
  return { smtp, start }
}

describe('the outbox: nothing acknowledged is lost, nothing is sent twice', () => {
  it('R6.4.2 kill -9 right after 100 acknowledged sends while the mail server is down: all 100 arrive once after both restart', async () => {
    const { smtp, start } = await setUp(backends[0] as Backend)
    await smtp.stop()
    const first = await start()
    const addresses = addressesFor(100, 'killed')
    await sendCodes(first, addresses)
    first.child.kill('SIGKILL')
    await new Promise((resolve) => first.child.once('exit', resolve))
    expect(smtp.messages).toHaveLength(0)

    await smtp.start()
    await start()
    // a batch the killed process held is claimed again once its lease (a few seconds here) has run out
    const counts = await receivedOnce(smtp, addresses, 90_000)
    expect(counts.size).toBe(100)
    expect([...counts.values()].every((count) => count === 1)).toBe(true)
  }, 120_000)

  const postgres = backends.find((backend) => backend.name === 'postgres')
  it.skipIf(postgres === undefined)(
    'R6.4.2 two instances on PostgreSQL send 200 messages: each arrives exactly once',
    async () => {
      const { smtp, start } = await setUp(postgres as Backend)
      const [one, two] = await Promise.all([start(), start()])
      const addresses = addressesFor(200, 'shared')
      // both instances queue at once, and both senders compete for every message
      await Promise.all([
        sendCodes(one as RunningService, addresses.slice(0, 100)),
        sendCodes(two as RunningService, addresses.slice(100)),
      ])
      const counts = await receivedOnce(smtp, addresses, 60_000)
      expect(counts.size).toBe(200)
      expect([...counts.values()].every((count) => count === 1)).toBe(true)
      // and the two senders together delivered 200 times: no message was sent by both
      const delivered = (service: RunningService) =>
        service.stdout.filter((line) => line.includes('"mail delivered"')).length
      expect(delivered(one as RunningService) + delivered(two as RunningService)).toBe(200)
    },
    120_000,
  )
})
