import type { Clock } from '../clock.js'
import type { WebhookConfig } from '../config/webhook-config.js'
import type { DeliveryLog } from '../delivery/delivery-log.js'
import {
  createQueueSender,
  QUEUE_SENDER_DEFAULTS,
  type QueueSender,
  type QueueSenderSettings,
} from '../delivery/queue-sender.js'
import { createStoreFailureLog } from '../delivery/store-failure-log.js'
import type { SecurityEventSink } from '../security-event.js'
import type { Stores } from '../storage/stores.js'
import { createDisabledUrls } from './disabled-urls.js'
import type { WebhookObserver } from './webhook-observer.js'
import { createWebhookPublisher, noWebhooks, type WebhookPublisher } from './webhook-publisher.js'
import { webhookTargets } from './webhook-urls.js'

export interface OpenWebhooksDeps {
  config: { webhooks: WebhookConfig; http: { basePath: string } }
  stores: Pick<Stores, 'outbox' | 'webhookUrls'>
  clock: Clock
  log: DeliveryLog
  /** Where webhook_disabled and webhook_dropped go (the audit sink). */
  events: SecurityEventSink
  /** The webhook metrics (METRICS_PORT); null without. */
  observer: WebhookObserver | null
  /** The sender's timings; its defaults otherwise (tests shorten them). */
  senderSettings?: Partial<QueueSenderSettings>
  /** The jitter of the retries: [0, 1). */
  random?: () => number
}

export interface OpenedWebhooks {
  /** What the account flows publish their events with. */
  publisher: WebhookPublisher
  /** The background delivery of this process: start() once the service is up, close() before the stores close. */
  sender: QueueSender
}

/** How often a process reads the disabled URLs again, so that its publisher skips a URL disabled elsewhere. */
const DISABLED_REFRESH_MS = 5_000

/**
 * The webhooks, wired (docs/api.md §6.5): the publisher and the sender of the outbox's webhook lane, with its HTTP
 * transport and its signer. Without WEBHOOK_URLS nothing is loaded: the publisher does nothing and the sender is
 * idle (events queued before WEBHOOK_URLS was emptied wait, and are given up by a process that has URLs).
 */
export async function openWebhooks(deps: OpenWebhooksDeps): Promise<OpenedWebhooks> {
  const { config, stores, clock, log } = deps
  const targets = webhookTargets(config.webhooks.urls)
  if (targets.length === 0) return { publisher: noWebhooks, sender: idleSender }
  // loaded only when there is a URL: the signing library, and the transport
  const { createWebhookSigner } = await import('./webhook-signer.js')
  const { createWebhookTransport } = await import('./webhook-transport.js')
  const { createWebhookDelivery } = await import('./webhook-delivery.js')
  const settings = { ...QUEUE_SENDER_DEFAULTS, ...deps.senderSettings }
  const disabled = createDisabledUrls(stores.webhookUrls, clock)
  const storeFailures = createStoreFailureLog(log, clock, settings.failureLogEveryMs, 'webhook')
  const transport = createWebhookTransport(config.webhooks.timeoutSeconds * 1000)
  const queue = createQueueSender({
    lane: 'webhook',
    outbox: stores.outbox,
    delivery: createWebhookDelivery({
      outbox: stores.outbox,
      targets,
      disabled,
      signer: createWebhookSigner(config.webhooks.secrets),
      transport,
      retrySeconds: config.webhooks.retrySeconds,
      giveUpAfterMs: config.webhooks.giveUpHours * 3_600_000,
      clock,
      log,
      storeFailures,
      events: deps.events,
      observer: deps.observer,
      random: deps.random ?? Math.random,
    }),
    transport,
    concurrency: config.webhooks.sendConnections,
    clock,
    log,
    storeFailures,
    settings,
  })
  let refresher: NodeJS.Timeout | null = null
  const sender: QueueSender = {
    start() {
      if (refresher !== null) return
      void disabled.refresh(0)
      refresher = setInterval(() => void disabled.refresh(DISABLED_REFRESH_MS), DISABLED_REFRESH_MS)
      // never keeps the process alive; close() ends it
      refresher.unref()
      queue.start()
    },
    wake: () => queue.wake(),
    deliverDue: () => queue.deliverDue(),
    async close() {
      if (refresher !== null) clearInterval(refresher)
      refresher = null
      await queue.close()
    },
  }
  const publisher = createWebhookPublisher({
    outbox: stores.outbox,
    targets,
    disabled,
    basePath: config.http.basePath,
    clock,
    observer: deps.observer,
    wake: () => sender.wake(),
  })
  return { publisher, sender }
}

/** The sender of a service without WEBHOOK_URLS. */
const idleSender: QueueSender = {
  start() {},
  wake() {},
  async deliverDue() {},
  async close() {},
}
