import { Webhook } from 'standardwebhooks'

/** The Standard Webhooks headers of one delivery attempt. */
export interface SignedHeaders {
  'webhook-id': string
  /** Seconds since the epoch, of the attempt. */
  'webhook-timestamp': string
  /** `v1,<base64 HMAC-SHA256>`, one per secret, separated by spaces. */
  'webhook-signature': string
}

/** Signs deliveries as the Standard Webhooks specification asks (docs/api.md R6.5.1). */
export interface WebhookSigner {
  /** The headers of an attempt at `at` (epoch ms) to post `body` as the message `id`. */
  sign(id: string, at: number, body: string): SignedHeaders
}

/**
 * The signer of WEBHOOK_SECRET and WEBHOOK_PREVIOUS_SECRETS (`secrets`, the current first): each signs, so that a
 * receiver that still knows only a previous secret, or already only the new one, verifies every delivery during a
 * rotation. The signatures are the `standardwebhooks` package's, the specification's reference implementation.
 */
export function createWebhookSigner(secrets: readonly string[]): WebhookSigner {
  if (secrets.length === 0) throw new RangeError('a webhook signer needs a secret')
  const keys = secrets.map((secret) => new Webhook(secret))
  return {
    sign(id, at, body) {
      const timestamp = new Date(at)
      return {
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at / 1000)),
        'webhook-signature': keys.map((key) => key.sign(id, timestamp, body)).join(' '),
      }
    },
  }
}
