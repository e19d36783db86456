import type { Clock } from '../clock.js'
import type { DeliveryLog } from '../delivery/delivery-log.js'
import type { HeldMessage } from '../delivery/queue-leases.js'
import type { LaneDelivery } from '../delivery/queue-sender.js'
import { createQueueSettlements } from '../delivery/queue-settlements.js'
import { nextAttemptAt } from '../delivery/retry-schedule.js'
import type { StoreFailureLog } from '../delivery/store-failure-log.js'
import { OFF_HTTP, type SecurityEventSink, securityEventRecorder } from '../security-event.js'
import type { OutboxMessage, OutboxStore } from '../storage/stores.js'
import type { DisabledUrls } from './disabled-urls.js'
import type { WebhookObserver } from './webhook-observer.js'
import type { WebhookSigner } from './webhook-signer.js'
import type { WebhookResult, WebhookTransport } from './webhook-transport.js'
import type { WebhookTarget } from './webhook-urls.js'

export interface WebhookDeliveryDeps {
  outbox: Pick<OutboxStore, 'remove' | 'failed' | 'release' | 'postpone'>
  /** WEBHOOK_URLS of this process. */
  targets: readonly WebhookTarget[]
  disabled: DisabledUrls
  signer: WebhookSigner
  transport: Pick<WebhookTransport, 'post'>
  /** WEBHOOK_RETRY_SECONDS. */
  retrySeconds: number
  /** WEBHOOK_GIVE_UP_HOURS, in milliseconds. */
  giveUpAfterMs: number
  clock: Clock
  log: DeliveryLog
  storeFailures: StoreFailureLog
  /** Where webhook_disabled and webhook_dropped go (the audit sink). */
  events: SecurityEventSink
  observer: Pick<WebhookObserver, 'delivered' | 'failed' | 'dropped'> | null
  /** The jitter of the retries: [0, 1). */
  random: () => number
}

/** How fresh the disabled URLs must be when an event is delivered: a 410 seen by another instance counts at once. */
const DISABLED_MAX_AGE_MS = 1_000

/** The `webhook-id` of the outbox message `id`: the same on every attempt, so that a receiver can drop a repeat. */
export function webhookIdFor(id: string): string {
  return `msg_${id}`
}

/**
 * One event's delivery to one URL (docs/api.md §6.5): signed at each attempt (a fresh `webhook-timestamp`, the same
 * `webhook-id` and body), posted, settled. 2xx → removed. 410 → the URL is disabled in the store, `webhook_disabled`
 * and a warn line the first time, the message removed; the messages still queued for it are removed as they come up,
 * and none is queued for it any more. Any other answer, or none → due again with backoff and a warn line, the URL's
 * other waiting events put off as long (untried); given up once it was queued WEBHOOK_GIVE_UP_HOURS ago (`webhook_dropped` and an error line). A message for a URL this
 * process does not have (WEBHOOK_URLS changed, or differs between instances) waits as a failure would, for an
 * instance that has it, until it is given up. No log line holds a URL or a body: the position of the URL, the outbox
 * id, the attempts and the status.
 */
export function createWebhookDelivery(deps: WebhookDeliveryDeps): LaneDelivery {
  const { clock, log, storeFailures } = deps
  const settlements = createQueueSettlements({
    outbox: deps.outbox,
    storeFailures,
    log,
    noun: 'an event',
    duplicateId: 'webhook-id',
  })
  const targets = new Map(deps.targets.map((target) => [target.digest, target]))
  const record = securityEventRecorder(deps.events, clock)

  const fields = (message: OutboxMessage, target: WebhookTarget | undefined) => ({
    outboxId: message.id,
    url: target?.position ?? null,
    type: eventType(message.payload),
  })

  const giveUp = async (held: HeldMessage, target: WebhookTarget | undefined, why: string) => {
    const { message, claimant } = held
    await settlements.remove(message.id, claimant)
    if (target !== undefined) deps.observer?.dropped(target.position)
    record(
      'webhook_dropped',
      eventUser(message.payload),
      OFF_HTTP,
      target === undefined ? null : `url_${target.position}`,
    )
    log.error(
      { ...fields(message, target), attempts: message.attempts + 1, reason: why },
      'a webhook event was given up',
    )
  }

  const failed = async (held: HeldMessage, target: WebhookTarget | undefined, reason: string) => {
    const { message, claimant } = held
    if (clock.now() - message.createdAt >= deps.giveUpAfterMs) {
      await giveUp(
        held,
        target,
        `still not delivered ${deps.giveUpAfterMs / 3_600_000} hours after it was queued: ${reason}`,
      )
      return
    }
    const failures = message.attempts + 1
    const next = nextAttemptAt(clock.now(), failures, deps.retrySeconds, deps.random)
    await settlements.failed(message.id, claimant, next)
    if (target !== undefined) {
      deps.observer?.failed(target.position)
      await postponeOthers(target, next)
    }
    log.warn(
      { ...fields(message, target), attempts: failures, nextAttemptAt: new Date(next).toISOString(), reason },
      'a webhook event could not be delivered: tried again later',
    )
  }

  /**
   * A receiver that failed is tried again at `until`: its other waiting events wait as long, untried, so that a
   * receiver that is down (or takes its timeout on every post) takes one delivery slot per retry, not one per event,
   * and the other URLs' events go meanwhile.
   */
  const postponeOthers = async (target: WebhookTarget, until: number) => {
    try {
      await deps.outbox.postpone('webhook', target.digest, until, clock.now())
      storeFailures.answered('outbox.postpone')
    } catch (error) {
      // each of them fails on its own when its turn comes
      storeFailures.failed('outbox.postpone', error)
    }
  }

  const gone = async (held: HeldMessage, target: WebhookTarget) => {
    let disabledNow: boolean
    try {
      disabledNow = await deps.disabled.disable(target.digest)
      storeFailures.answered('webhookUrls.disable')
    } catch (error) {
      storeFailures.failed('webhookUrls.disable', error)
      await failed(held, target, 'HTTP 410, and the URL could not be disabled in the store')
      return
    }
    if (disabledNow) {
      record('webhook_disabled', null, OFF_HTTP, `url_${target.position}`)
      log.warn(
        { url: target.position },
        `webhook URL ${target.position} of WEBHOOK_URLS answered 410 Gone: disabled, no event is sent to it until \`tessera webhooks enable\``,
      )
    }
    await settlements.remove(held.message.id, held.claimant)
    deps.observer?.dropped(target.position)
  }

  const settle = async (held: HeldMessage, target: WebhookTarget, result: WebhookResult) => {
    const { message, claimant } = held
    if (result.delivered) {
      await settlements.remove(message.id, claimant)
      deps.observer?.delivered(target.position)
      log.info(
        { ...fields(message, target), attempts: message.attempts + 1, status: result.status },
        'webhook event delivered',
      )
    } else if (result.gone) await gone(held, target)
    else await failed(held, target, result.reason)
  }

  return {
    async deliver(held) {
      const { message, claimant } = held
      const target = targets.get(message.recipient)
      if (target === undefined) {
        await failed(held, undefined, 'its URL is not in WEBHOOK_URLS (of this process)')
        return true
      }
      await deps.disabled.refresh(DISABLED_MAX_AGE_MS)
      if (deps.disabled.has(target.digest)) {
        // queued before its URL was disabled (here, or by another instance): dropped with the URL, not one by one
        await settlements.remove(message.id, claimant)
        deps.observer?.dropped(target.position)
        return true
      }
      // a lease that ran short is renewed first; a claim lost before or during the post stops it (held.signal)
      if (!(await held.confirm())) {
        log.warn(
          { ...fields(message, target) },
          'a webhook event was not sent: its claim was lost; whoever claims it next delivers it',
        )
        return true
      }
      const headers = deps.signer.sign(webhookIdFor(message.id), clock.now(), message.payload)
      const result = await deps.transport.post(target.url, message.payload, headers, held.signal)
      if (!result.delivered && held.signal.aborted) {
        log.warn(
          { ...fields(message, target), reason: String(held.signal.reason) },
          'a webhook event being sent was abandoned: its claim was lost; whoever claims it next delivers it',
        )
        return true
      }
      await settle(held, target, result)
      return true
    },
    release: settlements.release,
    settleLeftovers: settlements.settleLeftovers,
  }
}

/** The event's type, for the log; null when the body is not one (stored by another version). */
function eventType(body: string): string | null {
  try {
    const type = (JSON.parse(body) as { type?: unknown }).type
    return typeof type === 'string' ? type : null
  } catch {
    return null
  }
}

/** The account an event is about (data.user.id, or data.user_id), for its audit event; null for none. */
function eventUser(body: string): string | null {
  try {
    const data = (JSON.parse(body) as { data?: { user?: { id?: unknown }; user_id?: unknown } }).data
    const id = data?.user?.id ?? data?.user_id
    return typeof id === 'string' ? id : null
  } catch {
    return null
  }
}
