import { TesseraError } from './tessera-error.js'

/** The popup as its opener holds it: the WindowProxy that `window.open` returns. */
export interface Popup {
  readonly closed: boolean
  close(): void
}

/** The window that opens the sign-in popup and hears from it: the page's `window` by default. */
export interface PopupOpener {
  open(url: string, target: string, features: string): Popup | null
  addEventListener(type: 'message', listener: (event: MessageEvent) => void): void
  removeEventListener(type: 'message', listener: (event: MessageEvent) => void): void
  readonly location: { readonly origin: string }
}

/** What `loginWithProvider` takes besides the provider's name. */
export interface ProviderLoginOptions {
  /** How long the sign-in may take, from the popup's opening to its answer; 120 s by default. */
  timeoutMs?: number
  /** The window that opens the popup: the global `window` by default (a stand-in, in tests). */
  window?: PopupOpener
}

/** What the service's callback page posts to its opener (docs/api.md 4.24). */
interface ProviderResult {
  type: unknown
  success: boolean
  message: string
  data: unknown
}

/**
 * The login answer that `popup`'s callback page posts to `opener`: its `data` on success; a failure it reports is a
 * TesseraError 401 with its message; a popup closed without an answer, or no answer within `timeoutMs`, a TesseraError
 * 0. The popup is closed once the wait is over.
 */
export function providerResult(
  opener: PopupOpener,
  popup: Popup,
  origin: string,
  timeoutMs: number,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let closedTicks = 0
    const end = (error: TesseraError | null, data?: unknown) => {
      clearTimeout(timer)
      clearInterval(poll)
      opener.removeEventListener('message', hear)
      popup.close()
      if (error) reject(error)
      else resolve(data)
    }
    // any page may post to this window, the provider's among them: only the service's callback page in this popup
    // speaks for the sign-in
    const hear = (event: MessageEvent) => {
      const result = event.data as ProviderResult | null
      if (event.origin !== origin || event.source !== popup || result?.type !== 'auth:oauth:result') return
      end(result.success ? null : new TesseraError(401, result.message), result.data)
    }
    const timer = setTimeout(() => end(new TesseraError(0, 'The sign-in timed out')), timeoutMs)
    // seen closed twice, half a second apart: the callback page may close itself just after posting its answer,
    // which then arrives after the popup is seen closed
    const poll = setInterval(() => {
      if (popup.closed && ++closedTicks > 1) end(new TesseraError(0, 'The sign-in window was closed'))
    }, 500)
    opener.addEventListener('message', hear)
  })
}
