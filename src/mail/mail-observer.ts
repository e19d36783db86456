import type { DeliveryLog } from '../delivery/delivery-log.js'

/**
 * What the mail domain reports of itself, for the metrics (src/metrics/mail-metrics.ts implements it; the domain
 * does not know the sink). Each call counts one message.
 */
export interface MailObserver {
  /** Committed to the outbox. */
  queued(): void
  /** Accepted by the mail server, or written to the development outbox. */
  sent(): void
  /** An attempt failed; the message is tried again later. */
  failed(): void
  /** Given up: refused for good, failing for a day, or unreadable. */
  dropped(): void
  /** Not sent, as docs/api.md §4.14 asks: a sign-in or reset code to an address without an account. */
  skipped(): void
}

/** The slice of a logger the mail domain writes to (pino's). */
export type MailLog = DeliveryLog
