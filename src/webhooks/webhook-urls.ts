import { createHash } from 'node:crypto'

/** A URL of WEBHOOK_URLS, as the webhooks domain knows it. */
export interface WebhookTarget {
  /** The URL: used to post to, never logged, shown or stored (it may carry credentials). */
  readonly url: string
  /** Its position in WEBHOOK_URLS, from 1: what names it in the log, the metrics and `tessera webhooks list`. */
  readonly position: number
  /** urlDigest(url): what names it in the store (OutboxMessage.recipient, the disabled URLs). */
  readonly digest: string
}

/** The SHA-256 of a webhook URL, 64 lowercase hexadecimal digits: the store's name for it. */
export function urlDigest(url: string): string {
  return createHash('sha256').update(url, 'utf8').digest('hex')
}

/** WEBHOOK_URLS as targets, in their order. */
export function webhookTargets(urls: readonly string[]): WebhookTarget[] {
  return urls.map((url, index) => ({ url, position: index + 1, digest: urlDigest(url) }))
}
