import type { SignedHeaders } from './webhook-signer.js'

/** What became of one attempt. */
export type WebhookResult =
  | {
      delivered: true
      /** The receiver's status, 2xx. */
      status: number
    }
  | {
      delivered: false
      /** The receiver answered 410 Gone: it wants no more events (docs/api.md R6.5.5). */
      gone: boolean
      /** The status, or -1 when there was no answer. */
      status: number
      /** One line for the log: the status or the error's code, never the URL or the body. */
      reason: string
    }

/** How an event leaves the service: a POST to its URL. */
export interface WebhookTransport {
  /**
   * Posts `body` to `url` with the signed headers. Never rejects: a failure is a result. A post in progress when
   * `signal` aborts is abandoned and fails.
   */
  post(url: string, body: string, headers: SignedHeaders, signal?: AbortSignal): Promise<WebhookResult>
  /** Abandons the posts in progress. */
  close(): Promise<void>
}

/** The most of an answer's body read (and discarded): enough for a receiver's short text, not a flood. */
const MAX_ANSWER_BYTES = 64 * 1024

/**
 * Posts with Node's fetch (undici, its connections kept alive), within `timeoutMs` from the connection to the end of
 * the answer. Redirects are not followed: a 3xx is a failure, as the specification advises (a receiver that moved
 * says so to the operator, who changes WEBHOOK_URLS). Credentials in a URL (`https://user:password@host/`), which
 * fetch refuses in the URL itself, are sent as HTTP Basic authentication.
 */
export function createWebhookTransport(timeoutMs: number): WebhookTransport {
  const inFlight = new Set<AbortController>()
  return {
    async post(url, body, headers, signal) {
      const controller = new AbortController()
      inFlight.add(controller)
      const timer = setTimeout(() => controller.abort(new Error('timeout')), timeoutMs)
      const onAbort = () => controller.abort(signal?.reason)
      signal?.addEventListener('abort', onAbort, { once: true })
      try {
        if (signal?.aborted) return failure(-1, 'abandoned')
        const { target, authorization } = withoutCredentials(url)
        const response = await fetch(target, {
          method: 'POST',
          body,
          redirect: 'manual',
          signal: controller.signal,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'Tessera-Webhooks',
            ...headers,
            ...(authorization === null ? {} : { authorization }),
          },
        })
        await drain(response)
        if (response.status >= 200 && response.status < 300)
          return { delivered: true, status: response.status }
        return {
          delivered: false,
          gone: response.status === 410,
          status: response.status,
          reason: `HTTP ${response.status}`,
        }
      } catch (error) {
        return failure(
          -1,
          controller.signal.aborted ? abortReason(controller.signal.reason) : errorCode(error),
        )
      } finally {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        inFlight.delete(controller)
      }
    },
    async close() {
      for (const controller of inFlight) controller.abort(new Error('closed'))
      inFlight.clear()
    },
  }
}

function failure(status: number, reason: string): WebhookResult {
  return { delivered: false, gone: false, status, reason }
}

/** The URL without its user and password, and these as an Authorization header (null when it has none). */
function withoutCredentials(url: string): { target: string; authorization: string | null } {
  const parsed = new URL(url)
  if (parsed.username === '' && parsed.password === '') return { target: url, authorization: null }
  const user = decodeURIComponent(parsed.username)
  const password = decodeURIComponent(parsed.password)
  parsed.username = ''
  parsed.password = ''
  return {
    target: parsed.toString(),
    authorization: `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`,
  }
}

/** Reads at most MAX_ANSWER_BYTES of the answer, so that its connection can be kept, and drops the rest. */
async function drain(response: Response): Promise<void> {
  if (response.body === null) return
  let read = 0
  const reader = response.body.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      read += value.byteLength
      if (read > MAX_ANSWER_BYTES) {
        await reader.cancel()
        return
      }
    }
  } finally {
    reader.releaseLock()
  }
}

function abortReason(reason: unknown): string {
  return reason instanceof Error && reason.message === 'timeout' ? 'timeout' : 'abandoned'
}

/** The error's code (ECONNREFUSED, ENOTFOUND, a TLS code…), from fetch's `cause`: never its message, which may hold the URL. */
function errorCode(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause
  if (typeof cause?.code === 'string') return cause.code
  return error instanceof Error ? error.name : 'failed'
}
