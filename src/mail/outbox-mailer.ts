import { randomBytes } from 'node:crypto'
import type { Clock } from '../clock.js'
import { MailUnavailableError } from '../errors.js'
import { OFF_HTTP, type SecurityEventSink, securityEventRecorder } from '../security-event.js'
import type { OutboxStore } from '../storage/stores.js'
import type { Mailer } from './mail-intent.js'
import type { MailObserver } from './mail-observer.js'
import type { OutboxSeal } from './outbox-seal.js'

export interface OutboxMailerDeps {
  outbox: Pick<OutboxStore, 'enqueue'>
  seal: Pick<OutboxSeal, 'seal'>
  /** False in production without SMTP_URL. */
  available: boolean
  clock: Clock
  events: SecurityEventSink
  observer: Pick<MailObserver, 'queued'> | null
  /** This process's sender, woken by each message queued here. */
  wake: () => void
}

/**
 * The Mailer of the account flows (docs/api.md §6.4): a message is sealed and committed to the outbox, and the
 * answer that says it was sent waits for the commit; the sender delivers it in the background. A notice is recorded
 * as `mail_queued`; a code is not, since its flow records `code_sent` with the request that asked for it.
 */
export function createOutboxMailer(deps: OutboxMailerDeps): Mailer {
  const record = securityEventRecorder(deps.events, deps.clock)
  return {
    available: deps.available,
    async queue(to, intent, userId, language) {
      if (!deps.available) throw new MailUnavailableError()
      const id = randomBytes(16).toString('hex')
      const payload = deps.seal.seal(id, language === undefined ? { to, intent } : { to, intent, language })
      await deps.outbox.enqueue({
        id,
        lane: 'mail',
        userId,
        recipient: to,
        payload,
        createdAt: deps.clock.now(),
        // in the clear beside the sealed payload: what orders the claim (the newest codes first)
        codeExpiresAt: intent.kind === 'code' ? intent.expiresAt : null,
      })
      deps.observer?.queued()
      if (intent.kind !== 'code') record('mail_queued', userId, OFF_HTTP)
      deps.wake()
    },
  }
}
