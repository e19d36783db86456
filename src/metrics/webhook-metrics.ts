import { Counter, Gauge, type Registry } from 'prom-client'
import type { Clock } from '../clock.js'
import type { OutboxCount, OutboxStore } from '../storage/stores.js'
import type { WebhookObserver } from '../webhooks/webhook-observer.js'
import type { WebhookTarget } from '../webhooks/webhook-urls.js'

/** What the webhooks report for GET /metrics (docs/api.md §6.2, §6.5). */
export interface WebhookMetrics extends WebhookObserver {
  /**
   * The outbox whose webhook lane each scrape reads (OutboxStore.statsByRecipient), by URL of `targets`, its ages by
   * `clock`; every position is listed from then on, at zero.
   */
  watch(outbox: Pick<OutboxStore, 'statsByRecipient'>, targets: readonly WebhookTarget[], clock: Clock): void
}

/**
 * tessera_webhook_{queued,delivered,failed,dropped}_total, counted by each process for what it did, and
 * tessera_webhook_queued_messages and tessera_webhook_oldest_queued_age_seconds, read from the outbox at each scrape
 * (shared: WORKERS > 1 takes the largest of its workers'), each by `url`: the URL's position in WEBHOOK_URLS (`1` for
 * the first), never the URL, which may carry credentials. An oldest age that keeps rising is the alert: a receiver
 * does not take its events.
 */
export function createWebhookMetrics(registry: Registry): WebhookMetrics {
  let watched: {
    outbox: Pick<OutboxStore, 'statsByRecipient'>
    targets: readonly WebhookTarget[]
    clock: Clock
  } | null = null
  const counter = (name: string, help: string) =>
    new Counter({ name, help, labelNames: ['url'], registers: [registry] })
  const queued = counter(
    'tessera_webhook_queued_total',
    'Webhook events committed to the outbox, by URL position',
  )
  const delivered = counter(
    'tessera_webhook_delivered_total',
    'Webhook events a receiver answered 2xx, by URL position',
  )
  const failed = counter(
    'tessera_webhook_failed_total',
    'Webhook delivery attempts that failed and will be tried again, by URL position',
  )
  const dropped = counter(
    'tessera_webhook_dropped_total',
    'Webhook events given up: failing for WEBHOOK_GIVE_UP_HOURS, or their URL disabled by a 410, by URL position',
  )

  /** The webhook lane now, by URL, and the time it was read; null when not watched or failing (gauges keep theirs). */
  let reading: Promise<{ byRecipient: Map<string, OutboxCount>; now: number } | null> | null = null
  const stats = () => {
    if (watched === null) return Promise.resolve(null)
    const { outbox, clock } = watched
    reading ??= outbox
      .statsByRecipient('webhook')
      .then(
        (byRecipient) => ({ byRecipient, now: clock.now() }),
        () => null,
      )
      .finally(() => {
        reading = null
      })
    return reading
  }
  new Gauge({
    name: 'tessera_webhook_queued_messages',
    help: 'Webhook events waiting in the outbox (shared by every instance), by URL position',
    labelNames: ['url'],
    registers: [registry],
    aggregator: 'max',
    async collect() {
      const read = await stats()
      if (read === null || watched === null) return
      for (const target of watched.targets)
        this.labels(String(target.position)).set(read.byRecipient.get(target.digest)?.queued ?? 0)
    },
  })
  new Gauge({
    name: 'tessera_webhook_oldest_queued_age_seconds',
    help: 'How long the longest waiting webhook event has waited, by URL position; 0 when none waits',
    labelNames: ['url'],
    registers: [registry],
    aggregator: 'max',
    async collect() {
      const read = await stats()
      if (read === null || watched === null) return
      for (const target of watched.targets) {
        const oldest = read.byRecipient.get(target.digest)?.oldestCreatedAt ?? null
        this.labels(String(target.position)).set(
          oldest === null ? 0 : Math.max(0, (read.now - oldest) / 1000),
        )
      }
    },
  })

  const label = (position: number) => String(position)
  return {
    watch(outbox, targets, clock) {
      watched = { outbox, targets, clock }
      for (const target of targets)
        for (const metric of [queued, delivered, failed, dropped])
          metric.labels(label(target.position)).inc(0)
    },
    queued: (position) => queued.labels(label(position)).inc(),
    delivered: (position) => delivered.labels(label(position)).inc(),
    failed: (position) => failed.labels(label(position)).inc(),
    dropped: (position) => dropped.labels(label(position)).inc(),
  }
}
