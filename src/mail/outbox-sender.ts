import {
  createQueueSender,
  QUEUE_SENDER_DEFAULTS,
  type QueueSender,
  type QueueSenderSettings,
} from '../delivery/queue-sender.js'
import { createStoreFailureLog } from '../delivery/store-failure-log.js'
import type { OutboxStore } from '../storage/stores.js'
import type { MailTransport } from './mail-transport.js'
import { createOutboxDelivery, type OutboxDeliveryDeps } from './outbox-delivery.js'

export type OutboxSenderSettings = QueueSenderSettings
export type OutboxSender = QueueSender

export interface OutboxSenderDeps extends Omit<OutboxDeliveryDeps, 'storeFailures' | 'random' | 'transport'> {
  outbox: Pick<OutboxStore, 'claim' | 'renew' | 'remove' | 'failed' | 'release'>
  transport: MailTransport
  /** MAIL_SEND_CONNECTIONS: the most messages in flight at once (the transport's connections); 1 by default. */
  concurrency?: number
  /** The jitter of the retries: [0, 1). */
  random?: () => number
  settings?: Partial<OutboxSenderSettings>
}

/**
 * The sender of the outbox's mail lane (docs/api.md §6.4): the queue's sender (delivery/queue-sender.ts) with the
 * mail's delivery (outbox-delivery.ts) and its SMTP transport. Its claims take what is most worth sending at that
 * moment: what is not a code first, then the newest codes; a code that expired while it waited is dropped, not sent.
 */
export function createOutboxSender(deps: OutboxSenderDeps): OutboxSender {
  const settings = { ...QUEUE_SENDER_DEFAULTS, ...deps.settings }
  const storeFailures = createStoreFailureLog(deps.log, deps.clock, settings.failureLogEveryMs, 'mail')
  const delivery = createOutboxDelivery({ ...deps, storeFailures, random: deps.random ?? Math.random })
  return createQueueSender({
    lane: 'mail',
    outbox: deps.outbox,
    delivery,
    transport: deps.transport,
    concurrency: deps.concurrency,
    clock: deps.clock,
    log: deps.log,
    storeFailures,
    settings,
  })
}
