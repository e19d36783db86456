import type { Clock } from '../clock.js'
import type { WebhookUrlStore } from '../storage/stores.js'

/** The webhook URLs disabled by a 410 (docs/api.md R6.5.5), as one process knows them. */
export interface DisabledUrls {
  /** Whether the URL of `digest` was disabled when the store was last read (or by this process since). */
  has(digest: string): boolean
  /**
   * Reads the store again when it was last read `maxAgeMs` ago or more (or never); a store that fails leaves what was
   * known.
   */
  refresh(maxAgeMs: number): Promise<void>
  /** Disables the URL of `digest` in the store; true when this call did (false: it was already). */
  disable(digest: string): Promise<boolean>
}

/**
 * The disabled URLs, read from the store (shared by every instance) at most once per `maxAgeMs` of the caller: the
 * publisher asks synchronously, so that publishing an event costs no read; an event queued for a URL just disabled
 * elsewhere is dropped by the sender, which refreshes before it delivers.
 */
export function createDisabledUrls(store: WebhookUrlStore, clock: Clock): DisabledUrls {
  let known = new Set<string>()
  let readAt: number | null = null
  let reading: Promise<void> | null = null
  return {
    has: (digest) => known.has(digest),
    refresh(maxAgeMs) {
      if (readAt !== null && clock.now() - readAt < maxAgeMs) return Promise.resolve()
      reading ??= store
        .disabled()
        .then(
          (rows) => {
            known = new Set(rows.map((row) => row.urlDigest))
            readAt = clock.now()
          },
          // what was known stands; the next refresh tries again
          () => {},
        )
        .finally(() => {
          reading = null
        })
      return reading
    },
    async disable(digest) {
      const disabled = await store.disable(digest, clock.now())
      known.add(digest)
      return disabled
    },
  }
}
