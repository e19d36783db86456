import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { loadBetterSqlite3 } from '../../src/storage/sqlite/better-sqlite3.js'
import { type Backend, type BackendInstance, backends } from '../support/backends.js'
import { fetchJson } from '../support/fetch-json.js'
import { type RunningService, startProcess } from '../support/process.js'
import {
  type SilentSmtpServer,
  startSilentSmtpServer,
  startSmtpServer,
  type TestSmtpServer,
} from '../support/smtp-server.js'

// docs/api.md R6.4.1, R6.4.2: a mail the answer said was sent is never lost and is delivered once, through process
// deaths and across instances. Real processes (`tessera serve`), a real SMTP server, a real database.

/**
 * Retries a second apart. The lease (15 s) does not depend on the send timeout, which is long enough that a reply the
 * loaded test machine is slow to give is not taken for a failure: the mail server would have the message already,
 * and its retry would arrive twice.
 */
const MAIL_ENV = {
  MAIL_RETRY_SECONDS: '1',
  MAIL_SEND_TIMEOUT_SECONDS: '10',
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
const servers: Array<TestSmtpServer | SilentSmtpServer> = []
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
    // what the killed process held is claimed again once its lease (15 s) has run out
    const counts = await receivedOnce(smtp, addresses, 90_000)
    expect(counts.size).toBe(100)
    expect([...counts.values()].every((count) => count === 1)).toBe(true)
  }, 120_000)

  it('R6.4.2 kill -9 while its sends hang (MAIL_SEND_TIMEOUT_SECONDS=30): its leases end within 15 s, and another process delivers each message once', async () => {
    const sqlite = backends.find((backend) => backend.name === 'sqlite') as Backend
    const instance = await sqlite.setup()
    instances.push(instance)
    // the killed process's mail server never answers: its sends would wait 90 s (three timeouts) before failing
    const silent = await startSilentSmtpServer()
    servers.push(silent)
    const smtp = await startSmtpServer()
    servers.push(smtp)
    const env = { ...instance.env, ...MAIL_ENV, MAIL_SEND_TIMEOUT_SECONDS: '30' }
    const first = await startProcess({ ...env, SMTP_URL: silent.url })
    running.push(first)
    const addresses = addressesFor(3, 'hanging')
    await sendCodes(first, addresses)
    // each in flight on a connection of its own
    await vi.waitFor(() => expect(silent.opened()).toBe(3), { timeout: 30_000 })
    // the lease follows the sends, not what they might take: it ends within 15 s of now (it was 95 s, sized on three
    // timeouts and a margin)
    const leases = readLeases(instance.env.DATABASE_URL as string)
    const readAt = Date.now()
    expect(leases).toHaveLength(3)
    for (const leaseUntil of leases) expect(leaseUntil - readAt).toBeLessThanOrEqual(15_000)
    first.child.kill('SIGKILL')
    await new Promise((resolve) => first.child.once('exit', resolve))

    await startProcess({ ...env, SMTP_URL: smtp.url }).then((second) => running.push(second))
    // claimed again as each lease ends (a generous bound, which a lease of 95 s could not meet)
    const counts = await receivedOnce(smtp, addresses, 60_000)
    expect(counts.size).toBe(3)
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

/** The lease ends (epoch ms) of the messages held in the SQLite store of `databaseUrl`, read beside the service. */
function readLeases(databaseUrl: string): number[] {
  const BetterSqlite3 = loadBetterSqlite3()
  const connection = new BetterSqlite3(databaseUrl.replace(/^sqlite:/, ''), { readonly: true })
  try {
    return connection
      .prepare('SELECT lease_until FROM outbox WHERE claimant IS NOT NULL')
      .pluck()
      .all()
      .map(Number)
  } finally {
    connection.close()
  }
}
