import type { Clock } from '../clock.js'
import type { WebhookConfig } from '../config/webhook-config.js'
import type { OutboxStore, WebhookUrlStore } from '../storage/stores.js'
import { webhookBody } from './webhook-event.js'
import { type WebhookTarget, webhookTargets } from './webhook-urls.js'

/** One URL of WEBHOOK_URLS as `tessera webhooks list` shows it. */
export interface WebhookUrlState {
  /** Its position in WEBHOOK_URLS, from 1: the URL itself is never shown. */
  position: number
  /** When a 410 disabled it (epoch ms); null when it is enabled. */
  disabledAt: number | null
  /** The events waiting for it, and when the longest waiting one was queued (null when none). */
  queued: number
  oldestCreatedAt: number | null
}

/** The URLs of WEBHOOK_URLS, in their order, each with its state and what waits for it. */
export async function listWebhookUrls(
  config: WebhookConfig,
  stores: { outbox: Pick<OutboxStore, 'statsByRecipient'>; webhookUrls: Pick<WebhookUrlStore, 'disabled'> },
): Promise<WebhookUrlState[]> {
  const disabled = new Map(
    (await stores.webhookUrls.disabled()).map((row) => [row.urlDigest, row.disabledAt]),
  )
  const waiting = await stores.outbox.statsByRecipient('webhook')
  return webhookTargets(config.urls).map((target) => ({
    position: target.position,
    disabledAt: disabled.get(target.digest) ?? null,
    queued: waiting.get(target.digest)?.queued ?? 0,
    oldestCreatedAt: waiting.get(target.digest)?.oldestCreatedAt ?? null,
  }))
}

/**
 * The URL of WEBHOOK_URLS that `given` names: the URL itself, or its position (`2`), which spares a command line a URL
 * with credentials. Null when it names none.
 */
export function findWebhookTarget(config: WebhookConfig, given: string): WebhookTarget | null {
  const targets = webhookTargets(config.urls)
  if (/^\d{1,3}$/.test(given)) return targets[Number(given) - 1] ?? null
  return targets.find((target) => target.url === given) ?? null
}

/**
 * `tessera webhooks enable`: the URL's record removed, so that events are queued for it again (every instance within
 * a few seconds) and none already queued is dropped any more. True when it was disabled.
 */
export function enableWebhookUrl(
  target: WebhookTarget,
  stores: { webhookUrls: Pick<WebhookUrlStore, 'enable'> },
): Promise<boolean> {
  return stores.webhookUrls.enable(target.digest)
}

/** What became of a ping to one URL. */
export interface PingOutcome {
  position: number
  /** Whether the URL is disabled (it is pinged all the same: the operator tries it before enabling it). */
  disabled: boolean
  delivered: boolean
  /** The receiver's status, or -1 without an answer. */
  status: number
  /** One line: the status, or the error's code; never the URL. */
  reason: string
}

/**
 * `tessera webhooks test`: a `ping` event posted to each URL now, signed as every delivery is, not through the outbox,
 * one after another; what each receiver answered. The signing library and the transport are loaded only here.
 */
export async function pingWebhookUrls(
  config: WebhookConfig,
  stores: { webhookUrls: Pick<WebhookUrlStore, 'disabled'> },
  clock: Clock,
  basePath: string,
): Promise<PingOutcome[]> {
  const { createWebhookSigner } = await import('./webhook-signer.js')
  const { createWebhookTransport } = await import('./webhook-transport.js')
  const { webhookIdFor } = await import('./webhook-delivery.js')
  const { randomBytes } = await import('node:crypto')
  const signer = createWebhookSigner(config.secrets)
  const transport = createWebhookTransport(config.timeoutSeconds * 1000)
  const disabled = new Set((await stores.webhookUrls.disabled()).map((row) => row.urlDigest))
  const outcomes: PingOutcome[] = []
  try {
    for (const target of webhookTargets(config.urls)) {
      const now = clock.now()
      const body = webhookBody({ type: 'ping' }, now, basePath)
      const id = webhookIdFor(randomBytes(16).toString('hex'))
      const result = await transport.post(target.url, body, signer.sign(id, now, body))
      outcomes.push({
        position: target.position,
        disabled: disabled.has(target.digest),
        delivered: result.delivered,
        status: result.status,
        reason: result.delivered ? `HTTP ${result.status}` : result.reason,
      })
    }
  } finally {
    await transport.close()
  }
  return outcomes
}
