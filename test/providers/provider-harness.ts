import { createHash, randomBytes } from 'node:crypto'
import { expect } from 'vitest'
import type { RunningService } from '../support/process.js'
import type { BrowserResponse, TestBrowser } from '../support/test-browser.js'

/** What the callback page posts to its opener (docs/api.md §4.24). */
export interface ResultMessage {
  type: string
  success: boolean
  provider: string
  message: string
  data: Record<string, any> | null
}

/** The JSON block of a callback page: the target origin and the message. */
export function pageResult(html: string): { targetOrigin: string | null; message: ResultMessage } {
  const match = /<script type="application\/json" id="result">([^<]*)<\/script>/.exec(html)
  if (match?.[1] === undefined) throw new Error(`no result block in ${html}`)
  return JSON.parse(match[1])
}

/**
 * The page runs nothing but its one constant script: exactly two script elements (the JSON block and the script),
 * a Content-Security-Policy that allows the script by its hash and nothing else, and the page kept by no cache.
 */
export function expectInertPage(response: BrowserResponse): void {
  expect(response.headers['content-type']).toBe('text/html; charset=utf-8')
  const scripts = [...response.text.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/gi)]
  expect(response.text.match(/<script\b/gi)).toHaveLength(2)
  expect(scripts).toHaveLength(2)
  expect(scripts[0]?.[0]).toMatch(/^<script type="application\/json" id="result">/)
  const code = scripts[1]?.[1] ?? ''
  const hash = createHash('sha256').update(code, 'utf8').digest('base64')
  expect(response.headers['content-security-policy']).toBe(
    `default-src 'none'; script-src 'sha256-${hash}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  )
  expect(response.headers['cache-control']).toBe('no-store')
  expect(response.headers['referrer-policy']).toBe('no-referrer')
  expect(response.headers['x-content-type-options']).toBe('nosniff')
}

/**
 * An application's PKCE pair for a redirect_to sign-in (RFC 7636): a fresh verifier and its S256 challenge,
 * BASE64URL(SHA-256(verifier)).
 */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

/** The service's answer to a JSON request, parsed. */
export async function api(
  service: RunningService,
  method: string,
  path: string,
  options: { body?: unknown; token?: string } = {},
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${service.url}${path}`, {
    method,
    headers: {
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    signal: AbortSignal.timeout(15_000),
  })
  return { status: response.status, body: await response.json() }
}

/**
 * A popup sign-in in `browser`: the start, the provider (whose interactions finish at once), and the callback page,
 * checked to be inert; resolves with the page and its message.
 */
export async function popupSignIn(
  browser: TestBrowser,
  service: RunningService,
  provider: string,
): Promise<{ page: BrowserResponse; result: ReturnType<typeof pageResult> }> {
  const page = await browser.navigate(`${service.url}/auth/oauth/${provider}/start`)
  expect(page.status, page.text).toBe(200)
  expectInertPage(page)
  return { page, result: pageResult(page.text) }
}

/**
 * Starts a sign-in in `browser` and follows it through the provider, stopping before the callback: resolves with
 * the callback URL the provider sent the browser to (not requested yet).
 */
export async function callbackUrlOf(
  browser: TestBrowser,
  service: RunningService,
  provider: string,
): Promise<URL> {
  let callback: URL | null = null
  const stop = (next: URL) => {
    if (!next.pathname.endsWith(`/auth/oauth/${provider}/callback`)) return false
    callback = next
    return true
  }
  const last = await browser.navigate(`${service.url}/auth/oauth/${provider}/start`, stop)
  if (callback === null)
    throw new Error(`the sign-in did not reach the callback: ${last.status} ${last.text}`)
  return callback
}

/** The sign-in succeeded: the message carries a login answer. */
export function expectSignedIn(result: ReturnType<typeof pageResult>, provider: string, origin: string) {
  expect(result.targetOrigin).toBe(origin)
  expect(result.message).toMatchObject({
    type: 'auth:oauth:result',
    success: true,
    provider,
    message: 'Signed in',
  })
  const data = result.message.data
  if (data === null) throw new Error('no data')
  expect(data.access_token).toEqual(expect.any(String))
  expect(data.refresh_token).toEqual(expect.any(String))
  return data
}

/** The sign-in failed with `message`: no data. */
export function expectFailed(result: ReturnType<typeof pageResult>, provider: string, message: string): void {
  expect(result.message).toEqual({ type: 'auth:oauth:result', success: false, provider, message, data: null })
}

export const FAILED = 'Sign-in failed'
export const STATE_INVALID = 'The sign-in expired or was started in another browser: try again'
export const EMAIL_UNVERIFIED =
  'An account with this e-mail address exists: sign in to it with its password or a code sent to the address'
