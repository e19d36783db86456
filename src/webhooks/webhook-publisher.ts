import { randomBytes } from 'node:crypto'
import type { AccountEventPublisher } from '../auth/account-events.js'
import type { Clock } from '../clock.js'
import { StorageError, WriteOutcomeUnknownError } from '../errors.js'
import type { NewOutboxMessage, OutboxStore } from '../storage/stores.js'
import type { DisabledUrls } from './disabled-urls.js'
import { type WebhookEvent, webhookBody } from './webhook-event.js'
import type { WebhookObserver } from './webhook-observer.js'
import type { WebhookTarget } from './webhook-urls.js'

/** The most bytes of an event's body, UTF-8 (OutboxMessage.payload's bound for the webhook lane). */
export const MAX_EVENT_BODY_BYTES = 32_768

/**
 * How the service tells the application what happened (docs/api.md §6.5): the AccountEventPublisher of the account
 * flows, `ping` too. Each event is queued in the outbox, the one delivery queue, as one message per URL of
 * WEBHOOK_URLS not disabled, each with a `webhook-id` of its own that every attempt repeats; the webhook sender of any
 * process delivers it.
 */
export interface WebhookPublisher extends AccountEventPublisher {
  /** Whether WEBHOOK_URLS names any URL: without one, publish does nothing and messages() makes none. */
  readonly enabled: boolean
  publish(events: readonly WebhookEvent[]): Promise<void>
  messages(events: readonly WebhookEvent[]): NewOutboxMessage[]
}

export interface WebhookPublisherDeps {
  outbox: Pick<OutboxStore, 'enqueueAll'>
  /** WEBHOOK_URLS. */
  targets: readonly WebhookTarget[]
  /** The URLs disabled by a 410: no event is queued for them. */
  disabled: Pick<DisabledUrls, 'has'>
  /** BASE_PATH: an avatar's path in an account's view. */
  basePath: string
  clock: Clock
  observer: Pick<WebhookObserver, 'queued'> | null
  /** This process's webhook sender, woken by each event queued here (a command has none: the service delivers). */
  wake: () => void
}

/** The publisher of a service, or a command, without WEBHOOK_URLS. */
export const noWebhooks: WebhookPublisher = {
  enabled: false,
  publish: async () => {},
  messages: () => [],
  queued: () => {},
}

/**
 * The publisher (docs/api.md §6.5). An event's body is written once, when it is published, and stored as it will be
 * posted (it carries no secret: an account's public view, ids, a reason), so every attempt posts the same text under
 * the same `webhook-id`. A message's user is not recorded (userId null): an account's deletion removes its mail,
 * never its events, `user.deleted` included.
 */
export function createWebhookPublisher(deps: WebhookPublisherDeps): WebhookPublisher {
  if (deps.targets.length === 0) return noWebhooks
  const { clock, targets } = deps
  const positionOf = new Map(targets.map((target) => [target.digest, target.position]))

  const messages = (events: readonly WebhookEvent[]): NewOutboxMessage[] => {
    const createdAt = clock.now()
    const live = targets.filter((target) => !deps.disabled.has(target.digest))
    return events.flatMap((event) => {
      const body = webhookBody(event, createdAt, deps.basePath)
      const bytes = Buffer.byteLength(body, 'utf8')
      if (bytes > MAX_EVENT_BODY_BYTES)
        throw new RangeError(`a ${event.type} event of ${bytes} bytes exceeds ${MAX_EVENT_BODY_BYTES}`)
      return live.map((target) => ({
        id: randomBytes(16).toString('hex'),
        lane: 'webhook' as const,
        userId: null,
        recipient: target.digest,
        payload: body,
        createdAt,
        codeExpiresAt: null,
      }))
    })
  }

  const queued = (stored: readonly NewOutboxMessage[]) => {
    if (stored.length === 0) return
    for (const message of stored) {
      const position = positionOf.get(message.recipient)
      if (position !== undefined) deps.observer?.queued(position)
    }
    deps.wake()
  }

  return {
    enabled: true,
    messages,
    queued,
    async publish(events) {
      const stored = messages(events)
      if (stored.length === 0) return
      try {
        await deps.outbox.enqueueAll(stored)
      } catch (error) {
        // the change the events report was made: the answer must not say that nothing was
        if (error instanceof StorageError) throw new WriteOutcomeUnknownError(error)
        throw error
      }
      queued(stored)
    },
  }
}
