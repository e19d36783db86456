import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { createFixedClock } from '../../src/clock.js'
import { type Config, loadConfig } from '../../src/config.js'
import { createLogger } from '../../src/logger.js'
import type { MailObserver } from '../../src/mail/mail-observer.js'
import { type OpenedMail, openMail } from '../../src/mail/open-mail.js'
import type { OutboxSenderSettings } from '../../src/mail/outbox-sender.js'
import type { OutgoingMail } from '../../src/mail/outgoing-mail.js'
import type { SecurityEvent } from '../../src/security-event.js'
import { newUserRecord } from '../../src/storage/new-user.js'
import { openStores } from '../../src/storage/open-stores.js'
import type { OutboxMessage, Stores } from '../../src/storage/stores.js'
import { startSmtpServer, type TestSmtpServer, type TestSmtpServerOptions } from '../support/smtp-server.js'

/** One composed message, for the transports' tests. */
export const SAMPLE_MAIL: OutgoingMail = {
  messageId: '<0123456789abcdef0123456789abcdef@example.com>',
  from: 'Acme <no-reply@example.com>',
  to: 'owner@example.com',
  subject: 'Your code to sign in to Acme',
  text: 'Code: 493817\n',
  html: '<p>Code: <b>493817</b></p>',
}

export const HARNESS_SECRET = 'mail-test-secret-0123456789-abcdefghijklmnopqrstuvwxyz'
export const START = Date.parse('2026-03-01T12:00:00.000Z')

/** The mail domain as server.ts wires it, on a fresh SQLite store, a real SMTP server and a fixed clock. */
export interface MailHarness {
  clock: ReturnType<typeof createFixedClock>
  stores: Stores
  config: Config
  mail: OpenedMail
  smtp: TestSmtpServer
  /** The security events the mail domain recorded. */
  events: SecurityEvent[]
  /** The observer's calls, by name. */
  counts: Record<keyof MailObserver, number>
  /** Every log line, as written (JSON). */
  logLines: string[]
  logs(): Array<Record<string, unknown>>
  /** The messages of the outbox that nobody holds, whether due or not (claimed, then released). */
  peek(): Promise<OutboxMessage[]>
  /** Creates an account with this address; resolves with its id. */
  addUser(email: string): Promise<string>
  /** Another wiring of the mail domain on the same store (another process), with its own settings. */
  openAnother(options?: HarnessOptions): Promise<{ mail: OpenedMail; events: SecurityEvent[] }>
  close(): Promise<void>
}

export interface HarnessOptions {
  /** Variables over the harness's own. */
  env?: Record<string, string>
  wrapStores?: (stores: Stores) => Stores
  senderSettings?: Partial<OutboxSenderSettings>
  secret?: string
  previousSecrets?: string[]
  /** The test SMTP server's options (a slow one). */
  smtp?: TestSmtpServerOptions
}

let nextUserId = 1_000_000_000

export async function openMailHarness(options: HarnessOptions = {}): Promise<MailHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'tessera-mail-'))
  const smtp = await startSmtpServer(options.smtp)
  try {
    return await wireHarness(dir, smtp, options)
  } catch (error) {
    await smtp.stop()
    await rm(dir, { recursive: true, force: true })
    throw error
  }
}

async function wireHarness(dir: string, smtp: TestSmtpServer, options: HarnessOptions): Promise<MailHarness> {
  const clock = createFixedClock(START)
  const configFor = (env: Record<string, string> = {}) =>
    loadConfig(
      {
        NODE_ENV: 'test',
        DATABASE_URL: `sqlite:${dir}/app.db`,
        DATA_DIR: dir,
        SMTP_URL: smtp.url,
        MAIL_FROM: 'Acme <no-reply@example.com>',
        MAIL_PRODUCT_NAME: 'Acme',
        MAIL_SEND_TIMEOUT_SECONDS: '2',
        MAIL_RETRY_SECONDS: '30',
        ...env,
      },
      { listens: false },
    )
  const config = configFor(options.env)
  const logLines: string[] = []
  const logger = createLogger(
    'info',
    new Writable({
      write(chunk, _encoding, done) {
        logLines.push(...String(chunk).split('\n').filter(Boolean))
        done()
      },
    }),
  )
  const opened = await openStores(config.storage, clock, logger)
  const stores = options.wrapStores?.(opened) ?? opened
  const counts: Record<keyof MailObserver, number> = { queued: 0, sent: 0, failed: 0, dropped: 0, skipped: 0 }
  const observer = Object.fromEntries(
    Object.keys(counts).map((name) => [name, () => void counts[name as keyof MailObserver]++]),
  ) as unknown as MailObserver
  const wire = async (wiring: HarnessOptions, events: SecurityEvent[]) =>
    openMail({
      config: configFor(wiring.env),
      stores,
      clock,
      log: logger,
      events: { record: (event) => events.push(event) },
      secret: wiring.secret ?? HARNESS_SECRET,
      previousSecrets: wiring.previousSecrets ?? [],
      observer,
      senderSettings: wiring.senderSettings,
    })
  const events: SecurityEvent[] = []
  const mail = await wire(options, events)
  const others: OpenedMail[] = []
  return {
    clock,
    stores,
    config,
    mail,
    smtp,
    events,
    counts,
    logLines,
    logs: () => logLines.map((line) => JSON.parse(line) as Record<string, unknown>),
    async peek() {
      const held = await opened.outbox.claim('mail', 'peek', Number.MAX_SAFE_INTEGER, 0, 1000)
      await opened.outbox.release(
        held.map((message) => message.id),
        'peek',
      )
      return held
    },
    async addUser(email) {
      const id = String(nextUserId++)
      await opened.users.create(
        newUserRecord({
          id,
          email,
          passwordHash: null,
          emailVerified: false,
          createdAt: new Date(clock.now()).toISOString(),
        }),
      )
      return id
    },
    async openAnother(wiring = {}) {
      const otherEvents: SecurityEvent[] = []
      const other = await wire(wiring, otherEvents)
      others.push(other)
      return { mail: other, events: otherEvents }
    },
    async close() {
      for (const other of others) await other.sender.close()
      await mail.sender.close()
      await opened.close()
      await smtp.stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
}
