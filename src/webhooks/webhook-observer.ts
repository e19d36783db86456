/**
 * What the webhooks report of themselves, for the metrics (src/metrics/webhook-metrics.ts implements it; the domain
 * does not know the sink). Each call counts one message, for the URL at `position` in WEBHOOK_URLS (from 1): a URL is
 * never a label, it may carry credentials.
 */
export interface WebhookObserver {
  /** Committed to the outbox. */
  queued(position: number): void
  /** Answered 2xx by the receiver. */
  delivered(position: number): void
  /** An attempt failed; the message is tried again later. */
  failed(position: number): void
  /** Given up: failing for WEBHOOK_GIVE_UP_HOURS, its URL disabled (410) or no longer configured, or unreadable. */
  dropped(position: number): void
}
