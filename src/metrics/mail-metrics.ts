import { Counter, Gauge, type Registry } from 'prom-client'
import type { Clock } from '../clock.js'
import { CODE_PURPOSES, type CodePurpose } from '../code-purpose.js'
import type { MailObserver } from '../mail/mail-observer.js'
import type { OutboxStore } from '../storage/stores.js'

/** What the mail and the e-mail codes report for GET /metrics (docs/api.md §6.2). */
export interface MailMetrics extends MailObserver {
  /** The outbox whose mail lane's size and oldest message each scrape reads (OutboxStore.stats), ages by `clock`. */
  watch(outbox: Pick<OutboxStore, 'stats'>, clock: Clock): void
  /** A one-time code of `purpose` was queued for mailing. */
  codeSent(purpose: CodePurpose): void
  /** A try at a code of `purpose` was refused (wrong, expired, used, of another purpose, out of tries). */
  codeRefused(purpose: CodePurpose): void
}

/**
 * tessera_mail_{queued,sent,failed,dropped,skipped}_total, counted by each process for what it did;
 * tessera_mail_queued_messages and tessera_mail_oldest_queued_age_seconds, read from the outbox at each scrape
 * (the outbox is shared: every process reports the same value, so WORKERS > 1 takes the largest of its workers'
 * rather than their sum); tessera_email_codes_sent_total and tessera_email_code_tries_failed_total by purpose, each
 * purpose listed from the start at zero. An oldest age that keeps rising is the alert: mail is not leaving.
 */
export function createMailMetrics(registry: Registry): MailMetrics {
  let watched: { outbox: Pick<OutboxStore, 'stats'>; clock: Clock } | null = null
  const counter = (name: string, help: string) => new Counter({ name, help, registers: [registry] })
  const queued = counter('tessera_mail_queued_total', 'Mail committed to the outbox')
  const sent = counter(
    'tessera_mail_sent_total',
    'Mail accepted by the mail server (or written to the development outbox)',
  )
  const failed = counter('tessera_mail_failed_total', 'Delivery attempts that failed and will be tried again')
  const dropped = counter(
    'tessera_mail_dropped_total',
    'Mail given up: refused for good, failing for a day, its code expired, or unreadable',
  )
  const skipped = counter(
    'tessera_mail_skipped_total',
    'Sign-in and reset codes not sent because no account has the address',
  )
  const byPurpose = (name: string, help: string) => {
    const metric = new Counter({ name, help, labelNames: ['purpose'], registers: [registry] })
    for (const purpose of CODE_PURPOSES) metric.labels(purpose).inc(0)
    return metric
  }
  const codesSent = byPurpose(
    'tessera_email_codes_sent_total',
    'One-time e-mail codes queued for mailing, by purpose',
  )
  const codesRefused = byPurpose(
    'tessera_email_code_tries_failed_total',
    'Tries at a one-time e-mail code that were refused, by purpose',
  )

  /**
   * The outbox now, and the time it was read; null when it is not watched or does not answer (the gauges keep their
   * last value). One query per scrape: the registry collects both gauges at once, and the second joins the first.
   */
  let reading: Promise<{ queued: number; oldestCreatedAt: number | null; now: number } | null> | null = null
  const stats = () => {
    if (watched === null) return Promise.resolve(null)
    const { outbox, clock } = watched
    reading ??= outbox
      .stats('mail')
      .then(
        (stats) => ({ ...stats, now: clock.now() }),
        () => null,
      )
      .finally(() => {
        reading = null
      })
    return reading
  }
  new Gauge({
    name: 'tessera_mail_queued_messages',
    help: 'Mail waiting in the outbox (shared by every instance)',
    registers: [registry],
    aggregator: 'max',
    async collect() {
      const outbox = await stats()
      if (outbox !== null) this.set(outbox.queued)
    },
  })
  new Gauge({
    name: 'tessera_mail_oldest_queued_age_seconds',
    help: 'How long the longest waiting mail of the outbox has waited; 0 when none waits',
    registers: [registry],
    aggregator: 'max',
    async collect() {
      const outbox = await stats()
      if (outbox === null) return
      const { oldestCreatedAt, now } = outbox
      this.set(oldestCreatedAt === null ? 0 : Math.max(0, (now - oldestCreatedAt) / 1000))
    },
  })

  return {
    watch(outbox, clock) {
      watched = { outbox, clock }
    },
    queued: () => queued.inc(),
    sent: () => sent.inc(),
    failed: () => failed.inc(),
    dropped: () => dropped.inc(),
    skipped: () => skipped.inc(),
    codeSent: (purpose) => codesSent.labels(purpose).inc(),
    codeRefused: (purpose) => codesRefused.labels(purpose).inc(),
  }
}
