import { afterEach, describe, expect, it, vi } from 'vitest'
import { StorageError } from '../../src/errors.js'
import type { MailIntent } from '../../src/mail/mail-intent.js'
import type { OutboxStore, Stores } from '../../src/storage/stores.js'
import { type SilentSmtpServer, startSilentSmtpServer } from '../support/smtp-server.js'
import { type HarnessOptions, type MailHarness, openMailHarness, START } from './mail-harness.js'

// docs/api.md R6.4.2: a claim's lease is short and follows the work in progress: renewed while a message is in hand,
// so that a process that dies leaves its messages to the others within a lease whatever a send may take, and never
// knowingly sent past the claim that allows it.

const LEASE_MS = 15_000

const loginCode = (digits: string): MailIntent => ({
  kind: 'code',
  purpose: 'login',
  code: digits,
  expiresAt: START + 3_600_000,
})

/** The outbox of `stores`, its renewals counted, and made to fail while `failing()` says so. */
function countingRenewals(stores: Stores, failing: () => boolean = () => false) {
  const renewals: string[][] = []
  const outbox: OutboxStore = {
    ...stores.outbox,
    async renew(ids, claimant, leaseUntil) {
      renewals.push([...ids])
      if (failing()) throw new StorageError('outbox.renew failed', { cause: new Error('SQLITE_BUSY') })
      return stores.outbox.renew(ids, claimant, leaseUntil)
    },
  }
  return { renewals, stores: { ...stores, outbox } }
}

describe('the outbox leases', () => {
  let harness: MailHarness | null = null
  const servers: SilentSmtpServer[] = []
  const open = async (options: HarnessOptions) => {
    harness = await openMailHarness({
      ...options,
      senderSettings: { leaseMs: LEASE_MS, renewEveryMs: 50, closeGraceMs: 200, ...options.senderSettings },
    })
    return harness
  }
  afterEach(async () => {
    await harness?.close()
    harness = null
    for (const server of servers.splice(0)) server.stop()
  })

  it('R6.4.2 keep a message held with a short lease, renewed for as long as its send runs', async () => {
    const silent = await startSilentSmtpServer()
    servers.push(silent)
    let counting: ReturnType<typeof countingRenewals> | null = null
    const h = await open({
      // a send may take three MAIL_SEND_TIMEOUT_SECONDS: 90 s here; the lease is 15 s all the same
      env: { SMTP_URL: silent.url, MAIL_SEND_TIMEOUT_SECONDS: '30' },
      wrapStores: (stores) => {
        counting = countingRenewals(stores)
        return counting.stores
      },
    })
    const { renewals } = counting as unknown as ReturnType<typeof countingRenewals>
    await h.mail.mailer.queue('owner@example.com', { kind: 'test' }, null)
    h.mail.sender.start()
    await vi.waitFor(() => expect(silent.opened()).toBe(1), { timeout: 10_000 })
    // claimed at START until START + 15 s: another claim finds it held until then, and takes it after
    expect(
      await h.stores.outbox.claim('mail', 'a'.repeat(32), START + LEASE_MS - 1, START + 60_000, 10),
    ).toEqual([])
    // the send goes on; the renewals move the lease on with the clock
    h.clock.advance(10_000)
    const before = renewals.length
    await vi.waitFor(() => expect(renewals.length).toBeGreaterThan(before + 1), { timeout: 10_000 })
    expect(
      await h.stores.outbox.claim('mail', 'b'.repeat(32), START + 10_000 + LEASE_MS - 1, START + 60_000, 10),
    ).toEqual([])
    // a lease ends 15 s after its last renewal, whatever the send may take (90 s here): then it is another's, and
    // the first sender abandons its send at its next renewal
    expect(
      await h.stores.outbox.claim('mail', 'c'.repeat(32), START + 10_000 + LEASE_MS, START + 60_000, 10),
    ).toEqual([expect.objectContaining({ recipient: 'owner@example.com' })])
    await vi.waitFor(() => expect(silent.closed()).toBe(1), { timeout: 10_000 })
  })

  it('R6.4.2 renew a lease that ran short before its send, and send', async () => {
    const h = await open({
      wrapStores: (stores) => ({
        ...stores,
        users: {
          ...stores.users,
          // the account is looked up slowly: the lease of the claim has ended by then (nobody took it)
          findByEmail: async (email) => {
            h.clock.advance(LEASE_MS + 25_000)
            return stores.users.findByEmail(email)
          },
        },
      }),
    })
    await h.addUser('owner@example.com')
    await h.mail.mailer.queue('owner@example.com', loginCode('100001'), null)
    await h.mail.sender.deliverDue()
    expect((await h.smtp.next()).text).toContain('100001')
    expect(await h.peek()).toEqual([])
    expect(h.logs().filter((line) => line.level === 40)).toEqual([])
  })

  it('R6.4.2 do not send what another process took over after the lease ended', async () => {
    let taken: string[] = []
    const h = await open({
      wrapStores: (stores) => ({
        ...stores,
        users: {
          ...stores.users,
          findByEmail: async (email) => {
            // the lease ends while the account is looked up, and another process claims the message
            h.clock.advance(LEASE_MS + 25_000)
            const now = h.clock.now()
            taken = (await stores.outbox.claim('mail', 'c'.repeat(32), now, now + 60_000, 10)).map(
              (m) => m.id,
            )
            return stores.users.findByEmail(email)
          },
        },
      }),
    })
    await h.addUser('owner@example.com')
    await h.mail.mailer.queue('owner@example.com', loginCode('100002'), null)
    const [queued] = await h.peek()
    await h.mail.sender.deliverDue()
    expect(taken).toEqual([queued?.id])
    expect(h.smtp.messages).toEqual([])
    // left to the process that holds it now: not counted, not failed, not removed
    expect(h.counts).toMatchObject({ sent: 0, failed: 0, dropped: 0 })
    expect(await h.stores.outbox.remove(queued?.id as string, 'c'.repeat(32))).toBe(true)
    expect(h.logs().find((line) => line.level === 40)).toMatchObject({
      outboxId: queued?.id,
      msg: expect.stringMatching(/^a mail was not sent: its claim was lost/),
      reason: 'another process took it over, or it was removed',
    })
  })

  it('R6.4.2 abandon a send whose message is removed meanwhile (its account deleted)', async () => {
    const silent = await startSilentSmtpServer()
    servers.push(silent)
    const h = await open({ env: { SMTP_URL: silent.url, MAIL_SEND_TIMEOUT_SECONDS: '30' } })
    const notice: MailIntent = { kind: 'notice', notice: 'password_changed', values: {} }
    await h.mail.mailer.queue('owner@example.com', notice, '1000000042')
    h.mail.sender.start()
    await vi.waitFor(() => expect(silent.opened()).toBe(1), { timeout: 10_000 })
    expect(await h.stores.outbox.deleteFor('1000000042', 'owner@example.com')).toBe(1)
    // the next renewal finds it gone: the connection is closed at once, not after the 90 s of the send
    await vi.waitFor(() => expect(silent.closed(), JSON.stringify(h.logs())).toBe(1), { timeout: 10_000 })
    await vi.waitFor(
      () =>
        expect(h.logs().find((line) => line.level === 40)).toMatchObject({
          msg: expect.stringMatching(/^a mail being sent was abandoned: its claim was lost/),
          reason: 'another process took it over, or it was removed',
        }),
      { timeout: 10_000 },
    )
    expect(h.counts).toMatchObject({ sent: 0, failed: 0 })
  })

  it('R6.4.2 abandon a send whose lease is about to end while the store cannot renew it, and leave the message', async () => {
    const silent = await startSilentSmtpServer()
    servers.push(silent)
    let failing = false
    const h = await open({
      env: { SMTP_URL: silent.url, MAIL_SEND_TIMEOUT_SECONDS: '30' },
      wrapStores: (stores) => countingRenewals(stores, () => failing).stores,
    })
    await h.mail.mailer.queue('owner@example.com', { kind: 'test' }, null)
    h.mail.sender.start()
    await vi.waitFor(() => expect(silent.opened()).toBe(1), { timeout: 10_000 })
    failing = true
    // a renewal that fails while the lease has time left changes nothing
    h.clock.advance(5_000)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(silent.closed()).toBe(0)
    // one that fails when the lease would end before the next: the send is given up
    h.clock.advance(LEASE_MS - 5_000)
    await vi.waitFor(() => expect(silent.closed()).toBe(1), { timeout: 10_000 })
    await vi.waitFor(() => expect(h.logs().find((line) => line.level === 40)).toBeDefined(), {
      timeout: 10_000,
    })
    expect(h.logs().find((line) => line.level === 40)).toMatchObject({
      msg: expect.stringMatching(/^a mail being sent was abandoned/),
      reason: 'its lease is ending and the outbox cannot renew it',
    })
    expect(h.logs()).toContainEqual(expect.objectContaining({ level: 50, operation: 'outbox.renew' }))
    // no attempt counted: the message waits, whole, for the next claim once its lease has ended
    expect(await h.peek()).toEqual([expect.objectContaining({ attempts: 0 })])
  })
})
