import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'

/** An answer as the browser received it. */
export interface BrowserResponse {
  url: string
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
}

interface StoredCookie {
  value: string
  path: string
}

/**
 * A browser for tests that drive redirects: a cookie jar of its own (one per browser, as two people's browsers), kept
 * per origin (scheme, host and port: stricter than a real browser, which ignores the port, so that a provider's
 * cookies and the service's on 127.0.0.1 stay apart), each cookie's Path and Max-Age=0 honoured. Redirects are
 * followed by hand, so that a test can stop at any hop. HTTPS is trusted for `ca` (the tests' certificate) only.
 */
export class TestBrowser {
  readonly #jar = new Map<string, Map<string, StoredCookie>>()
  readonly #ca: Buffer | undefined

  constructor(options: { ca?: Buffer } = {}) {
    this.#ca = options.ca
  }

  /** The cookie `name` this browser holds for `origin`; undefined when it holds none. */
  cookie(origin: string, name: string): string | undefined {
    return this.#jar.get(origin)?.get(name)?.value
  }

  /** Puts a cookie in the jar, as a page or another browser might have left it. */
  setCookie(origin: string, name: string, value: string, path = '/'): void {
    const cookies = this.#jar.get(origin) ?? new Map<string, StoredCookie>()
    cookies.set(name, { value, path })
    this.#jar.set(origin, cookies)
  }

  /** One request, with the jar's cookies for its URL; the answer's Set-Cookie headers go into the jar. */
  async fetch(
    url: string,
    init: { method?: string; headers?: Record<string, string>; body?: string } = {},
  ): Promise<BrowserResponse> {
    const target = new URL(url)
    const cookie = this.#cookieHeader(target)
    const headers: Record<string, string> = {
      'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) TestBrowser',
      ...(cookie === '' ? {} : { cookie }),
      ...init.headers,
    }
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest
    const response = await new Promise<BrowserResponse>((resolve, reject) => {
      const outgoing = send(
        target,
        {
          method: init.method ?? 'GET',
          headers,
          ...(target.protocol === 'https:' && this.#ca !== undefined ? { ca: this.#ca } : {}),
          timeout: 15_000,
        },
        (incoming) => {
          const chunks: Buffer[] = []
          incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
          incoming.on('error', reject)
          incoming.on('end', () =>
            resolve({
              url,
              status: incoming.statusCode ?? 0,
              headers: incoming.headers,
              text: Buffer.concat(chunks).toString('utf8'),
            }),
          )
        },
      )
      outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer from ${url} within 15 s`)))
      outgoing.on('error', reject)
      outgoing.end(init.body)
    })
    this.#store(target, [response.headers['set-cookie'] ?? []].flat())
    return response
  }

  /**
   * Navigates to `url` and follows redirects (GET) until an answer that is not one, or until `stopAt` holds for the
   * next URL (which is then not requested: the answer returned is the redirect to it). At most 10 hops.
   */
  async navigate(url: string, stopAt: (next: URL) => boolean = () => false): Promise<BrowserResponse> {
    let current = url
    for (let hop = 0; hop < 10; hop++) {
      const response = await this.fetch(current)
      const location = response.headers.location
      if (response.status < 300 || response.status >= 400 || typeof location !== 'string') return response
      const next = new URL(location, current)
      if (stopAt(next)) return response
      current = next.href
    }
    throw new Error(`more than 10 redirects from ${url}`)
  }

  #cookieHeader(target: URL): string {
    const cookies = this.#jar.get(target.origin)
    if (cookies === undefined) return ''
    return [...cookies]
      .filter(([, cookie]) => target.pathname.startsWith(cookie.path))
      .map(([name, cookie]) => `${name}=${cookie.value}`)
      .join('; ')
  }

  #store(target: URL, setCookies: readonly string[]): void {
    const cookies = this.#jar.get(target.origin) ?? new Map<string, StoredCookie>()
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';').map((part) => part.trim())
      const at = pair.indexOf('=')
      if (at <= 0) continue
      const name = pair.slice(0, at)
      const attribute = (key: string) =>
        attributes.find((part) => part.toLowerCase().startsWith(`${key}=`))?.slice(key.length + 1)
      const path = attribute('path') ?? '/'
      const maxAge = attribute('max-age')
      const expires = attribute('expires')
      const gone =
        (maxAge !== undefined && Number(maxAge) <= 0) ||
        (expires !== undefined && Date.parse(expires) <= Date.now())
      if (gone) cookies.delete(name)
      else cookies.set(name, { value: pair.slice(at + 1), path })
    }
    this.#jar.set(target.origin, cookies)
  }
}
