import { ConfigError } from './config-error.js'
import type { EnvReader } from './env-reader.js'
import type { Environment } from './environment.js'
import { isLoopbackHost } from './server-config.js'

/** Webhooks: the events the service posts to the application (docs/api.md §6.5). */
export interface WebhookConfig {
  /**
   * WEBHOOK_URLS, in their order: each event is posted to every one of them. A URL's position (1 for the first)
   * names it in the metrics, the log and `tessera webhooks list`: the URL itself may carry credentials, so it is
   * never shown. Empty: no webhooks.
   */
  urls: readonly string[]
  /**
   * WEBHOOK_SECRET followed by WEBHOOK_PREVIOUS_SECRETS, each `whsec_` and the base64 of its key (the Standard
   * Webhooks specification's form): every one of them signs each delivery. Empty only when `urls` is.
   */
  secrets: readonly string[]
  /** WEBHOOK_GIVE_UP_HOURS: how long an event is tried, from when it was queued, before it is dropped. */
  giveUpHours: number
  /** WEBHOOK_RETRY_SECONDS: the wait after a first failed delivery; it doubles with each further one, up to an hour. */
  retrySeconds: number
  /** WEBHOOK_TIMEOUT_SECONDS: the longest a delivery may take, from the connection to the end of the answer. */
  timeoutSeconds: number
  /** WEBHOOK_SEND_CONNECTIONS: how many deliveries each process makes at once. */
  sendConnections: number
}

/** `whsec_` and the standard, padded base64 of the key: the Standard Webhooks specification's secret. */
const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/

/** The key lengths the specification recommends: at least 24 bytes, at most 64. */
const MIN_KEY_BYTES = 24
const MAX_KEY_BYTES = 64

/**
 * WEBHOOK_*: the URLs, each an absolute https URL (http only to a loopback host outside production), none twice;
 * the secrets, each well formed, one required once there is a URL. A malformed secret stops the start even without
 * URLs: it would sign nothing, and the operator means something by it. No error line quotes a URL or a secret.
 */
export function readWebhookConfig(read: EnvReader, env: Environment): WebhookConfig {
  const urls = read.list('WEBHOOK_URLS').map((url, index) => checkedUrl(url, index + 1, env))
  if (new Set(urls).size !== urls.length)
    throw new ConfigError('WEBHOOK_URLS', 'lists a URL twice: each event would be posted to it twice')
  const secret = read.optional('WEBHOOK_SECRET')
  if (secret !== null) checkSecret('WEBHOOK_SECRET', secret)
  const previous = read.list('WEBHOOK_PREVIOUS_SECRETS')
  for (const item of previous) checkSecret('WEBHOOK_PREVIOUS_SECRETS', item)
  if (previous.length > 0 && secret === null)
    throw new ConfigError('WEBHOOK_PREVIOUS_SECRETS', 'is set without WEBHOOK_SECRET, the current secret')
  if (urls.length > 0 && secret === null)
    throw new ConfigError(
      'WEBHOOK_URLS',
      'is set without WEBHOOK_SECRET, which signs the events (whsec_ and the base64 of 24 to 64 random bytes)',
    )
  return {
    urls,
    secrets: urls.length === 0 || secret === null ? [] : [secret, ...previous],
    giveUpHours: read.integer('WEBHOOK_GIVE_UP_HOURS', 72, { min: 1, max: 720 }),
    retrySeconds: read.integer('WEBHOOK_RETRY_SECONDS', 10, { min: 1, max: 3600 }),
    timeoutSeconds: read.integer('WEBHOOK_TIMEOUT_SECONDS', 10, { min: 1, max: 120 }),
    sendConnections: read.integer('WEBHOOK_SEND_CONNECTIONS', 5, { min: 1, max: 50 }),
  }
}

/** The URL at `position` of WEBHOOK_URLS, named by its position only: it may carry credentials. */
function checkedUrl(url: string, position: number, env: Environment): string {
  const problem = `item ${position} must be an absolute https URL (http only to a loopback host outside production)`
  if (!URL.canParse(url)) throw new ConfigError('WEBHOOK_URLS', problem)
  const parsed = new URL(url)
  if (parsed.protocol === 'https:') return url
  if (parsed.protocol === 'http:' && env !== 'production' && isLoopbackHost(parsed.hostname)) return url
  throw new ConfigError('WEBHOOK_URLS', problem)
}

/** A Standard Webhooks secret, or a ConfigError for `variable` that does not quote it. */
function checkSecret(variable: string, value: string): void {
  const match = SECRET.exec(value)
  const key = match === null ? null : Buffer.from(match[1] as string, 'base64')
  if (
    key === null ||
    key.length < MIN_KEY_BYTES ||
    key.length > MAX_KEY_BYTES ||
    // Node decodes what it can of a text that is not base64 (a stray character, padding missing): the text must be
    // exactly what the key encodes, as the verifiers of the receivers will decode it
    key.toString('base64') !== match?.[1]
  )
    throw new ConfigError(
      variable,
      `must be whsec_ followed by the base64 of ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} random bytes (the Standard Webhooks form), such as the output of: node -e "console.log('whsec_' + require('crypto').randomBytes(32).toString('base64'))"`,
    )
}
