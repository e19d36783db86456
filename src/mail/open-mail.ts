import type { Clock } from '../clock.js'
import type { MailConfig } from '../config/mail-config.js'
import type { SecurityEventSink } from '../security-event.js'
import type { Stores } from '../storage/stores.js'
import type { Mailer } from './mail-intent.js'
import type { MailLog, MailObserver } from './mail-observer.js'
import { loadMailTemplates } from './mail-templates.js'
import { openMailTransport } from './open-mail-transport.js'
import { createOutboxMailer } from './outbox-mailer.js'
import { createOutboxSeal } from './outbox-seal.js'
import { createOutboxSender, type OutboxSender, type OutboxSenderSettings } from './outbox-sender.js'

export interface OpenMailDeps {
  config: { mail: MailConfig; storage: { dataDir: string } }
  stores: Pick<Stores, 'outbox' | 'users'>
  clock: Clock
  log: MailLog
  /** Where mail_queued, mail_sent, mail_failed and mail_dropped go (the audit sink). */
  events: SecurityEventSink
  /** AUTH_JWT_SECRET (or the development secret): what the outbox payloads are sealed with. */
  secret: string
  /** AUTH_JWT_PREVIOUS_SECRETS: payloads sealed before a rotation still open. */
  previousSecrets: readonly string[]
  /** The mail metrics (METRICS_PORT); null without. */
  observer: MailObserver | null
  /** The sender's timings; its defaults otherwise (tests shorten them). */
  senderSettings?: Partial<OutboxSenderSettings>
}

export interface OpenedMail {
  /** What the account flows queue their mail with. */
  mailer: Mailer
  /** The background delivery of this process: start() once the service is up, close() before the stores close. */
  sender: OutboxSender
  /** Where mail goes, for the log (`smtp://host:port`, the development outbox); null when none can be sent. */
  transport: string | null
}

/**
 * The mail domain, wired (docs/api.md §6.4): the templates read and checked (a ConfigError for MAIL_TEMPLATES_DIR
 * when the operator's cannot be used), the transport SMTP_URL asks for, the outbox mailer and its sender. In
 * production without SMTP_URL nothing can be sent: the mailer is not `available`, the sender does nothing, and a
 * warn line says so at start; mail already queued waits for SMTP_URL.
 */
export async function openMail(deps: OpenMailDeps): Promise<OpenedMail> {
  const { config, stores, clock, log } = deps
  const templates = await loadMailTemplates(config.mail)
  const seal = createOutboxSeal({ secret: deps.secret, previousSecrets: deps.previousSecrets })
  const transport = await openMailTransport(config.mail, config.storage.dataDir)
  if (transport === null) {
    log.warn(
      {},
      'no mail can be sent (production without SMTP_URL): sending codes answers 503, and queued mail waits for SMTP_URL',
    )
  }
  const sender =
    transport === null
      ? idleSender
      : createOutboxSender({
          outbox: stores.outbox,
          users: stores.users,
          seal,
          templates,
          transport,
          concurrency: config.mail.sendConnections,
          from: config.mail.from,
          passwordResetUrl: config.mail.passwordResetUrl,
          retrySeconds: config.mail.retrySeconds,
          clock,
          log,
          events: deps.events,
          observer: deps.observer,
          settings: deps.senderSettings,
        })
  const mailer = createOutboxMailer({
    outbox: stores.outbox,
    seal,
    available: transport !== null,
    clock,
    events: deps.events,
    observer: deps.observer,
    wake: () => sender.wake(),
  })
  return { mailer, sender, transport: transport?.description ?? null }
}

/** The sender of a service that cannot send mail. */
const idleSender: OutboxSender = {
  start() {},
  wake() {},
  async deliverDue() {},
  async close() {},
}
