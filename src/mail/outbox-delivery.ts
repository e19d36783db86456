import type { Clock } from '../clock.js'
import type { HeldMessage } from '../delivery/queue-leases.js'
import type { LaneDelivery } from '../delivery/queue-sender.js'
import { createQueueSettlements } from '../delivery/queue-settlements.js'
import { nextAttemptAt } from '../delivery/retry-schedule.js'
import type { StoreFailureLog } from '../delivery/store-failure-log.js'
import {
  OFF_HTTP,
  type SecurityEventSink,
  type SecurityEventType,
  securityEventRecorder,
} from '../security-event.js'
import type { OutboxMessage, OutboxStore, UserStore } from '../storage/stores.js'
import { contentOf, type MailContent, mailEventReason } from './mail-content.js'
import type { MailLog, MailObserver } from './mail-observer.js'
import type { MailTemplates } from './mail-templates.js'
import type { DeliveryResult, MailTransport } from './mail-transport.js'
import type { OutboxSeal, SealedMail } from './outbox-seal.js'
import { messageIdFor } from './outgoing-mail.js'

export interface OutboxDeliveryDeps {
  outbox: Pick<OutboxStore, 'remove' | 'failed' | 'release'>
  /** Whether an address has an account: what a code of a public purpose becomes (mail-content.ts). */
  users: Pick<UserStore, 'findByEmail'>
  seal: Pick<OutboxSeal, 'open'>
  templates: MailTemplates
  transport: Pick<MailTransport, 'send'>
  /** MAIL_FROM. */
  from: string
  /** PASSWORD_RESET_URL: the link of a reset mail (mail-content.ts); null for none. */
  passwordResetUrl: string | null
  /** MAIL_RETRY_SECONDS. */
  retrySeconds: number
  clock: Clock
  log: MailLog
  storeFailures: StoreFailureLog
  events: SecurityEventSink
  observer: Pick<MailObserver, 'sent' | 'failed' | 'dropped' | 'skipped'> | null
  /** The jitter of the retries: [0, 1). */
  random: () => number
}

/** How long a mail is tried before it is given up: a day after it was queued. */
export const GIVE_UP_AFTER_MS = 86_400_000

/**
 * One message's delivery (docs/api.md §6.4): opened, written with the templates of this moment, sent, settled.
 * Delivered → removed, `mail_sent`. Failed → due again with backoff, `mail_failed` and a warn line; given up (and
 * removed, `mail_dropped` and an error line) when the server refused it for good, when it was queued a day ago, when
 * its code expired meanwhile, or when its payload cannot be opened. A sign-in or reset code to an address without an
 * account is removed unsent (skipped). The claim is confirmed before the send (queue-leases.ts): one lost before or
 * while the message is sent (taken over, removed, unrenewable) leaves it as it is to whoever holds it next, with a
 * warn line. No log line holds the payload or the code: only the outbox id, the account, the attempts and the
 * server's answer.
 */
export function createOutboxDelivery(deps: OutboxDeliveryDeps): LaneDelivery {
  const { clock, log, storeFailures } = deps
  const settlements = createQueueSettlements({
    outbox: deps.outbox,
    storeFailures,
    log,
    noun: 'a mail',
    duplicateId: 'Message-ID',
  })

  const recordEvent = securityEventRecorder(deps.events, clock)
  const record = (type: SecurityEventType, message: OutboxMessage, mail: SealedMail | null) =>
    recordEvent(type, message.userId, OFF_HTTP, mail === null ? null : mailEventReason(mail.intent))

  const { release } = settlements

  const giveUp = async (message: OutboxMessage, claimant: string, mail: SealedMail | null, why: string) => {
    await settlements.remove(message.id, claimant)
    deps.observer?.dropped()
    record('mail_dropped', message, mail)
    log.error(
      { outboxId: message.id, userId: message.userId, attempts: message.attempts, reason: why },
      'a queued mail was given up',
    )
  }

  const delivered = async (
    message: OutboxMessage,
    claimant: string,
    mail: SealedMail,
    result: Extract<DeliveryResult, { delivered: true }>,
  ) => {
    await settlements.remove(message.id, claimant)
    deps.observer?.sent()
    record('mail_sent', message, mail)
    const fields = { outboxId: message.id, userId: message.userId, attempts: message.attempts + 1 }
    if (result.file === null) log.info({ ...fields, response: result.response }, 'mail delivered')
    else log.info({ ...fields, file: result.file }, `mail written to ${result.file}`)
  }

  const failed = async (message: OutboxMessage, claimant: string, mail: SealedMail, reason: string) => {
    const failures = message.attempts + 1
    const next = nextAttemptAt(clock.now(), failures, deps.retrySeconds, deps.random)
    await settlements.failed(message.id, claimant, next)
    deps.observer?.failed()
    record('mail_failed', message, mail)
    log.warn(
      {
        outboxId: message.id,
        userId: message.userId,
        attempts: failures,
        nextAttemptAt: new Date(next).toISOString(),
        reason,
      },
      'a mail could not be delivered: tried again later',
    )
  }

  /**
   * Writes the message with the templates of this moment, in its language (docs/api.md R1.18), and hands it to the
   * transport.
   */
  const send = async (
    held: HeldMessage,
    mail: SealedMail,
    content: Exclude<MailContent, 'skip'>,
  ): Promise<DeliveryResult> => {
    const { to } = mail
    let rendered: ReturnType<MailTemplates['render']>
    try {
      rendered = deps.templates.render(content.template, content.values, mail.language)
    } catch (error) {
      return { delivered: false, permanent: false, reason: `cannot be written: ${(error as Error).message}` }
    }
    return deps.transport.send(
      { ...rendered, messageId: messageIdFor(held.message.id, deps.from), from: deps.from, to },
      held.signal,
    )
  }

  /** The claim on `held` was lost: nothing more is done with it here. */
  const lost = (held: HeldMessage, what: string) => {
    log.warn(
      { outboxId: held.message.id, userId: held.message.userId, reason: String(held.signal.reason) },
      `${what}: its claim was lost (the reason says why); whoever claims it next delivers it`,
    )
  }

  const hasAccount = async (email: string) => (await deps.users.findByEmail(email)) !== null

  return {
    async deliver(held) {
      const { message, claimant } = held
      const mail = deps.seal.open(message.id, message.payload)
      if (mail === null) {
        const why =
          'its payload cannot be opened: sealed under a secret that is neither AUTH_JWT_SECRET nor one of AUTH_JWT_PREVIOUS_SECRETS, or altered'
        await giveUp(message, claimant, null, why)
        return true
      }
      const now = clock.now()
      if (mail.intent.kind === 'code' && mail.intent.expiresAt <= now) {
        await giveUp(message, claimant, mail, 'its code expired before it could be delivered')
        return true
      }
      let content: MailContent
      try {
        content = await contentOf(mail, now, hasAccount, deps.passwordResetUrl)
      } catch (error) {
        storeFailures.failed('users.findByEmail', error)
        await release([message], claimant)
        return false
      }
      if (content === 'skip') {
        await settlements.remove(message.id, claimant)
        deps.observer?.skipped()
        return true
      }
      // a lease that ran short is renewed first; a claim lost before or during the send stops it (held.signal)
      if (!(await held.confirm())) {
        lost(held, 'a mail was not sent')
        return true
      }
      const result = await send(held, mail, content)
      if (!result.delivered && held.signal.aborted) lost(held, 'a mail being sent was abandoned')
      else if (result.delivered) await delivered(message, claimant, mail, result)
      else if (result.permanent) await giveUp(message, claimant, mail, `refused for good: ${result.reason}`)
      else if (clock.now() - message.createdAt >= GIVE_UP_AFTER_MS)
        await giveUp(
          message,
          claimant,
          mail,
          `still not delivered a day after it was queued: ${result.reason}`,
        )
      else await failed(message, claimant, mail, result.reason)
      return true
    },

    release,
    settleLeftovers: settlements.settleLeftovers,
  }
}
