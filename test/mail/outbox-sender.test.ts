import { afterEach, describe, expect, it, vi } from 'vitest'
import type { MailIntent } from '../../src/mail/mail-intent.js'
import { GIVE_UP_AFTER_MS } from '../../src/mail/outbox-delivery.js'
import type { SecurityEvent } from '../../src/security-event.js'
import { type MailHarness, openMailHarness, START } from './mail-harness.js'

/** Every code these tests mail: none of them may appear in a log line. */
const CODES = new Set<string>()
let nextCode = 314_159

const code = (purpose: Extract<MailIntent, { kind: 'code' }>['purpose'], ttlMs = 600_000): MailIntent => {
  const digits = String(nextCode++)
  CODES.add(digits)
  return { kind: 'code', purpose, code: digits, expiresAt: START + ttlMs }
}

const withoutAt = (events: SecurityEvent[]) => events.map(({ at: _, ...event }) => event)
const event = (type: SecurityEvent['type'], userId: string | null, reason: SecurityEvent['reason']) => ({
  type,
  userId,
  reason,
  clientAddress: null,
  requestId: null,
})

describe('the outbox sender', () => {
  let harness: MailHarness | null = null
  const open = async (...options: Parameters<typeof openMailHarness>) => {
    harness = await openMailHarness(...options)
    return harness
  }

  afterEach(async () => {
    if (harness === null) return
    const lines = harness.logLines
    await harness.close()
    harness = null
    // no code ever reaches the log, whatever happened to its mail: as a number of its own (the same six digits
    // turn up now and then inside the random hex of one of a backlog's 2,000 outbox ids)
    for (const line of lines) {
      for (const digits of CODES)
        expect(line).not.toMatch(new RegExp(`(?<![0-9A-Za-z])${digits}(?![0-9A-Za-z])`))
    }
  })

  it('delivers a queued code: both parts, the Message-ID of its outbox id, removed, counted and recorded', async () => {
    const h = await open()
    const userId = await h.addUser('owner@example.com')
    const intent = code('login')
    await h.mail.mailer.queue('owner@example.com', intent, userId)
    const [queued] = await h.peek()
    expect(queued).toMatchObject({ recipient: 'owner@example.com', userId, attempts: 0, createdAt: START })
    expect(queued?.payload).not.toContain((intent as { code: string }).code)
    await h.mail.sender.deliverDue()
    const received = await h.smtp.next()
    expect(received).toMatchObject({
      to: ['owner@example.com'],
      from: 'no-reply@example.com',
      subject: 'Your code to sign in to Acme',
      messageId: `<${queued?.id}@example.com>`,
    })
    for (const part of [received.text, received.html]) {
      expect(part).toContain((intent as { code: string }).code)
      expect(part).toContain('10 minutes')
    }
    expect(await h.peek()).toEqual([])
    expect(h.counts).toEqual({ queued: 1, sent: 1, failed: 0, dropped: 0, skipped: 0 })
    // a code is recorded by its flow as code_sent; the mailer records only its delivery
    expect(withoutAt(h.events)).toEqual([event('mail_sent', userId, 'login')])
    expect(h.logs().find((line) => line.msg === 'mail delivered')).toMatchObject({
      outboxId: queued?.id,
      userId,
      attempts: 1,
      response: expect.stringMatching(/^250 /),
    })
  })

  it('says how many minutes the code is still good for when it leaves', async () => {
    const h = await open()
    await h.mail.mailer.queue('owner@example.com', code('verify_email', 15 * 60_000), '1000000123')
    h.clock.advance(4 * 60_000 + 10_000)
    await h.mail.sender.deliverDue()
    expect((await h.smtp.next()).text).toContain('good for 11 minutes')
  })

  it('records a notice as mail_queued, and sends it with its values', async () => {
    const h = await open()
    const userId = await h.addUser('old@example.com')
    const notice: MailIntent = {
      kind: 'notice',
      notice: 'email_changed',
      values: { new_email: 'new@example.com' },
    }
    await h.mail.mailer.queue('old@example.com', notice, userId)
    await h.mail.sender.deliverDue()
    const received = await h.smtp.next()
    expect(received.to).toEqual(['old@example.com'])
    expect(received.text).toContain('from old@example.com to new@example.com')
    expect(withoutAt(h.events)).toEqual([
      event('mail_queued', userId, null),
      event('mail_sent', userId, null),
    ])
  })

  it('writes each message in the language it was queued with (docs/api.md R1.18); one queued without, in English', async () => {
    const h = await open()
    await h.addUser('taken@example.com')
    const fresh = code('register')
    await h.mail.mailer.queue('new@example.com', fresh, null, 'zh-CN')
    // decided at delivery, and written in the language of the request all the same
    await h.mail.mailer.queue('taken@example.com', code('register'), null, 'zh-CN')
    // a row queued by a version that kept no language, or by one that spoke a language this one does not
    await h.mail.mailer.queue('old@example.com', { kind: 'test' }, null)
    await h.mail.mailer.queue('gone@example.com', { kind: 'test' }, null, 'fr')
    await h.mail.sender.deliverDue()
    const chinese = await h.smtp.next((mail) => mail.to[0] === 'new@example.com')
    expect(chinese.subject).toBe('你的 Acme 注册验证码')
    expect(chinese.text).toContain((fresh as { code: string }).code)
    expect(chinese.text).toContain('验证码 10 分钟内有效，且只能使用一次。')
    expect(chinese.html).toContain('<html lang="zh-CN">')
    const taken = await h.smtp.next((mail) => mail.to[0] === 'taken@example.com')
    expect(taken.subject).toBe('你已有 Acme 账号')
    expect(taken.text).toContain('忘记密码')
    expect((await h.smtp.next((mail) => mail.to[0] === 'old@example.com')).subject).toBe('Acme test message')
    expect((await h.smtp.next((mail) => mail.to[0] === 'gone@example.com')).subject).toBe('Acme test message')
  })

  it('is woken by a message queued in its process, long before its next poll', async () => {
    const h = await open({ senderSettings: { pollIntervalMs: 60_000 } })
    h.mail.sender.start()
    await h.mail.mailer.queue('owner@example.com', { kind: 'test' }, null)
    expect((await h.smtp.next(undefined, 5_000)).subject).toBe('Acme test message')
  })

  it('finds mail queued by another process at its next poll', async () => {
    const h = await open({ senderSettings: { pollIntervalMs: 50 } })
    h.mail.sender.start()
    // the other process's mailer, whose sender does not run
    const other = await h.openAnother()
    await other.mail.mailer.queue('owner@example.com', { kind: 'test' }, null)
    expect((await h.smtp.next(undefined, 5_000)).to).toEqual(['owner@example.com'])
  })

  it('sends nothing for a sign-in or reset code to an address without an account, and says nothing of it', async () => {
    const h = await open()
    await h.mail.mailer.queue('nobody@example.com', code('login'), null)
    await h.mail.mailer.queue('nobody@example.com', code('reset_password'), null)
    await h.mail.sender.deliverDue()
    expect(await h.peek()).toEqual([])
    expect(h.smtp.messages).toEqual([])
    expect(h.counts).toMatchObject({ queued: 2, sent: 0, skipped: 2, dropped: 0 })
    expect(h.events).toEqual([])
    // with an account, the same codes are sent
    await h.addUser('nobody@example.com')
    await h.mail.mailer.queue('nobody@example.com', code('reset_password'), null)
    await h.mail.sender.deliverDue()
    expect((await h.smtp.next()).subject).toBe('Your code to reset your Acme password')
  })

  it('sends a register code to a new address, and to a taken one the register_taken notice without the code', async () => {
    const h = await open()
    await h.addUser('taken@example.com')
    const taken = code('register')
    const fresh = code('register')
    await h.mail.mailer.queue('taken@example.com', taken, null)
    await h.mail.mailer.queue('new@example.com', fresh, null)
    await h.mail.sender.deliverDue()
    const notice = await h.smtp.next((mail) => mail.to[0] === 'taken@example.com')
    expect(notice.subject).toBe('You already have a Acme account')
    expect(`${notice.subject}${notice.text}${notice.html}`).not.toContain((taken as { code: string }).code)
    expect(notice.text).toContain('Forgot password')
    const withCode = await h.smtp.next((mail) => mail.to[0] === 'new@example.com')
    expect(withCode.text).toContain((fresh as { code: string }).code)
    expect(withoutAt(h.events)).toEqual([
      event('mail_sent', null, 'register'),
      event('mail_sent', null, 'register'),
    ])
  })

  it('retries, with backoff, a mail the server could not take, and delivers it once it is back', async () => {
    const h = await open()
    await h.smtp.stop()
    await h.mail.mailer.queue('owner@example.com', { kind: 'test' }, null)
    const delays: number[] = []
    for (let attempt = 1; attempt <= 9; attempt++) {
      await h.mail.sender.deliverDue()
      const [waiting] = await h.peek()
      expect(waiting?.attempts).toBe(attempt)
      delays.push((waiting?.nextAttemptAt as number) - h.clock.now())
      // not due before its time: a pass now sends nothing
      await h.mail.sender.deliverDue()
      expect((await h.peek())[0]?.attempts).toBe(attempt)
      h.clock.set(waiting?.nextAttemptAt as number)
    }
    // MAIL_RETRY_SECONDS (30), doubling, at most an hour, each shortened by up to a fifth
    const nominal = [30, 60, 120, 240, 480, 960, 1920, 3600, 3600].map((seconds) => seconds * 1000)
    delays.forEach((delay, index) => {
      expect(delay).toBeLessThanOrEqual(nominal[index] as number)
      expect(delay).toBeGreaterThanOrEqual((nominal[index] as number) * 0.8)
    })
    expect(h.smtp.messages).toEqual([])
    await h.smtp.start()
    await h.mail.sender.deliverDue()
    expect((await h.smtp.next()).subject).toBe('Acme test message')
    expect(h.smtp.messages).toHaveLength(1)
    expect(await h.peek()).toEqual([])
    expect(h.counts).toMatchObject({ failed: 9, sent: 1, dropped: 0 })
    expect(h.events.map((e) => e.type)).toEqual(['mail_queued', ...Array(9).fill('mail_failed'), 'mail_sent'])
    const warning = h.logs().find((line) => line.msg === 'a mail could not be delivered: tried again later')
    expect(warning).toMatchObject({
      level: 40,
      attempts: 1,
      reason: expect.stringMatching(/ECONNREFUSED|ESOCKET/),
    })
    expect(Object.keys(warning ?? {})).not.toContain('payload')
  })

  it('gives a mail up, with an event and an error line, once it has failed for a day', async () => {
    const h = await open()
    const userId = await h.addUser('owner@example.com')
    h.smtp.refuse('temporary')
    await h.mail.mailer.queue(
      'owner@example.com',
      { kind: 'notice', notice: 'password_changed', values: {} },
      userId,
    )
    await h.mail.sender.deliverDue()
    expect((await h.peek())[0]?.attempts).toBe(1)
    h.clock.set(START + GIVE_UP_AFTER_MS - 1)
    await h.mail.sender.deliverDue()
    expect((await h.peek())[0]?.attempts).toBe(2)
    h.clock.set(START + GIVE_UP_AFTER_MS + 3_600_000)
    await h.mail.sender.deliverDue()
    expect(await h.peek()).toEqual([])
    expect(h.counts).toMatchObject({ failed: 2, dropped: 1, sent: 0 })
    expect(withoutAt(h.events).at(-1)).toEqual(event('mail_dropped', userId, null))
    expect(h.logs().find((line) => line.msg === 'a queued mail was given up')).toMatchObject({
      level: 50,
      userId,
      reason: expect.stringMatching(/^still not delivered a day after it was queued: .*451/),
    })
  })

  it('gives a mail up at once when the server refuses it for good (5xx)', async () => {
    const h = await open()
    h.smtp.refuse('permanent')
    await h.mail.mailer.queue('owner@example.com', code('change_email'), '1000000999')
    await h.mail.sender.deliverDue()
    expect(await h.peek()).toEqual([])
    expect(h.counts).toMatchObject({ failed: 0, dropped: 1 })
    expect(withoutAt(h.events)).toEqual([event('mail_dropped', '1000000999', 'change_email')])
    expect(h.logs().find((line) => line.msg === 'a queued mail was given up')?.reason).toMatch(
      /^refused for good: .*550/,
    )
  })

  it('gives up a code that expired before it could leave', async () => {
    const h = await open()
    await h.smtp.stop()
    await h.mail.mailer.queue('owner@example.com', code('verify_email', 60_000), '1000000998')
    await h.mail.sender.deliverDue()
    h.clock.advance(60_000)
    await h.smtp.start()
    await h.mail.sender.deliverDue()
    expect(await h.peek()).toEqual([])
    expect(h.smtp.messages).toEqual([])
    expect(h.logs().find((line) => line.msg === 'a queued mail was given up')?.reason).toBe(
      'its code expired before it could be delivered',
    )
  })

  it('delivers mail sealed before a secret rotation, and gives up what no secret it knows opens', async () => {
    const h = await open({ secret: 'the-old-secret-0123456789-abcdefghijklmnopqrstuvwxyz' })
    const userId = await h.addUser('owner@example.com')
    await h.mail.mailer.queue('owner@example.com', code('login'), userId)
    const rotated = await h.openAnother({
      secret: 'the-new-secret-0123456789-abcdefghijklmnopqrstuvwxyz',
      previousSecrets: ['the-old-secret-0123456789-abcdefghijklmnopqrstuvwxyz'],
    })
    await rotated.mail.sender.deliverDue()
    expect((await h.smtp.next()).to).toEqual(['owner@example.com'])
    await h.mail.mailer.queue('owner@example.com', code('login'), userId)
    const forgetful = await h.openAnother({ secret: 'the-new-secret-0123456789-abcdefghijklmnopqrstuvwxyz' })
    await forgetful.mail.sender.deliverDue()
    expect(await h.peek()).toEqual([])
    expect(h.smtp.messages).toHaveLength(1)
    // the purpose is sealed too: an unreadable message is dropped without one
    expect(withoutAt(forgetful.events)).toEqual([event('mail_dropped', userId, null)])
    expect(h.logs().find((line) => line.msg === 'a queued mail was given up')?.reason).toMatch(
      /cannot be opened.*AUTH_JWT_PREVIOUS_SECRETS/,
    )
  })

  it('keeps the Message-ID of a mail sent twice: the outbox could not record the first delivery', async () => {
    let removals = 0
    const h = await open({
      wrapStores: (stores) => ({
        ...stores,
        outbox: {
          ...stores.outbox,
          // the first three removals fail: after the delivery, and again at each of the next two passes
          async remove(id, claimant) {
            if (removals++ < 3) throw new Error('the outbox store is down')
            return stores.outbox.remove(id, claimant)
          },
        },
      }),
    })
    await h.mail.mailer.queue('owner@example.com', { kind: 'test' }, null)
    await h.mail.sender.deliverDue()
    expect(h.smtp.messages).toHaveLength(1)
    // still held by the first claim: not sent again until its lease ends
    await h.mail.sender.deliverDue()
    expect(h.smtp.messages).toHaveLength(1)
    h.clock.advance(10 * 60_000)
    await h.mail.sender.deliverDue()
    expect(h.smtp.messages).toHaveLength(2)
    const [first, second] = h.smtp.messages
    expect(second?.messageId).toBe(first?.messageId)
    expect(await h.peek()).toEqual([])
    // once when the removals started to fail, once more a minute (here ten) later
    const failures = h.logs().filter((line) => line.msg?.toString().startsWith('the outbox store failed'))
    expect(failures).toHaveLength(2)
    // the first claim's removal, made at last, finds the message gone: said, not an error
    await h.mail.sender.deliverDue()
    expect(h.logs().at(-1)?.msg).toMatch(/after its claim had ended/)
    expect(h.smtp.messages).toHaveLength(2)
  })

  it('R6.4.2 sends a code asked for behind a backlog of 2,000 long before them on a slow server, and never one that expired', async () => {
    // a relay that takes 20 ms for each reply, and a flood of register codes to new addresses: the oldest 400
    // expired while they waited, 1,600 still good
    const h = await open({ smtp: { replyDelayMs: 20 } })
    const flood = async (tag: string, count: number, ttlMs: number) => {
      for (let start = 0; start < count; start += 200) {
        await Promise.all(
          Array.from({ length: Math.min(200, count - start) }, (_, i) =>
            // not code(): among thousands, one would turn up in a log line's digits by chance
            h.mail.mailer.queue(
              `${tag}-${start + i}@example.com`,
              { kind: 'code', purpose: 'register', code: 'flood', expiresAt: h.clock.now() + ttlMs },
              null,
            ),
          ),
        )
      }
    }
    await flood('expired', 400, 60_000)
    h.clock.advance(60_000)
    await flood('waiting', 1_600, 600_000)
    // someone with an account, made before the sending starts so that nothing slow (a hash on a loaded machine)
    // comes between the backlog's first deliveries and the honest code
    await h.addUser('honest@example.com')
    h.mail.sender.start()
    await vi.waitFor(() => expect(h.smtp.messages.length).toBeGreaterThanOrEqual(10), { timeout: 60_000 })
    // asked for now
    h.clock.advance(1_000)
    const honest = { ...code('login'), expiresAt: h.clock.now() + 600_000 }
    const sentBefore = h.smtp.messages.length
    const waitingBefore = (await h.stores.outbox.stats('mail')).queued
    await h.mail.mailer.queue('honest@example.com', honest, null)
    const arrived = await h.smtp.next((mail) => mail.to[0] === 'honest@example.com', 120_000)
    expect(arrived.text).toContain((honest as { code: string }).code)
    // it went out with the messages in flight when it was queued, not after the backlog: counted from its queueing
    // (however many went out before it on a loaded machine), fewer than 100 went before it, and most still wait
    expect(h.smtp.messages.indexOf(arrived) - sentBefore).toBeLessThan(100)
    expect(waitingBefore).toBeGreaterThan(1_000)
    await h.mail.sender.close()
    const sent = h.smtp.messages.length
    expect(h.smtp.messages.filter((mail) => mail.to[0]?.startsWith('expired-'))).toEqual([])

    // ten minutes on, every code left has expired: another sender drops them all and sends none
    h.clock.advance(600_000)
    const other = await h.openAnother()
    await other.mail.sender.deliverDue()
    expect(h.smtp.messages).toHaveLength(sent)
    expect(await h.stores.outbox.stats('mail')).toEqual({ queued: 0, oldestCreatedAt: null })
    expect(other.events).toHaveLength(2_001 - sent)
    expect(other.events.every((e) => e.type === 'mail_dropped' && e.reason === 'register')).toBe(true)
    const drops = h.logs().filter((line) => line.msg === 'a queued mail was given up')
    expect(drops).toHaveLength(2_001 - sent)
    expect(drops.every((line) => line.reason === 'its code expired before it could be delivered')).toBe(true)
  }, 180_000)

  it('shares the outbox with another process: each message is delivered once', async () => {
    const h = await open()
    const other = await h.openAnother()
    for (let n = 0; n < 30; n++) await h.mail.mailer.queue(`user${n}@example.com`, { kind: 'test' }, null)
    await Promise.all([h.mail.sender.deliverDue(), other.mail.sender.deliverDue()])
    const ids = h.smtp.messages.map((mail) => mail.messageId)
    expect(ids).toHaveLength(30)
    expect(new Set(ids).size).toBe(30)
    expect(new Set(h.smtp.messages.map((mail) => mail.to[0])).size).toBe(30)
  })
})
