import type { AddressInfo } from 'node:net'
import { backends } from '../../test/support/backends.js'
import { codeIn, emlMailbox, type Mailbox } from '../../test/support/mailbox.js'
import { startTestService } from '../../test/support/test-service.js'
import type { RefreshLocks, TokenStorage } from '../src/index.js'

/**
 * The real service (SQLite in a temporary directory) listening on 127.0.0.1, port 0; `env` adds to the tests'
 * settings (AUTH_SESSIONS=per-device, say). Outside production without SMTP_URL, it writes its mail to
 * <DATA_DIR>/outbox/, which `mailbox` reads.
 */
export async function startListeningService(env: Record<string, string> = {}) {
  const sqlite = backends.find((backend) => backend.name === 'sqlite')
  if (!sqlite) throw new Error('the sqlite backend is always available')
  const service = await startTestService(sqlite, { env })
  await service.app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = service.app.server.address() as AddressInfo
  let mailbox: Mailbox | undefined
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    /** Its mail (read from the first use on). */
    get mailbox(): Mailbox {
      mailbox ??= emlMailbox(service.config.storage.dataDir)
      return mailbox
    },
    async close() {
      await mailbox?.close()
      await service.close()
    },
  }
}

/** The code of the next mail to `address` that carries one (a notice, such as "password changed", carries none). */
export async function mailedCode(mailbox: Mailbox, address: string): Promise<string> {
  for (;;) {
    const code = codeIn(await mailbox.next(address))
    if (code !== null) return code
  }
}

/** Another code than `code`: a wrong one, and yet well-formed. */
export const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0')

let accounts = 0
/** Credentials of an account no other test uses. */
export const newCredentials = () => ({
  email: `user-${process.pid}-${++accounts}-${Date.now()}@example.com`,
  password: 'correct horse battery',
})

/** A Map behind the Web Storage shape: what tabs of one origin share as localStorage. */
export function createSharedStorage(): TokenStorage & { items: Map<string, string> } {
  const items = new Map<string, string>()
  return {
    items,
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
    removeItem: (key) => void items.delete(key),
  }
}

export interface SeenRequest {
  method: string
  path: string
  /** The query string, with its `?`; '' for none. */
  query: string
  authorization: string | null
  headers: Record<string, string>
  body: string
}

/**
 * The global fetch, observed: every request the client sends is recorded (and `before` may hold it back or answer
 * it instead, to inject a failure).
 */
export function observedFetch(
  before?: (request: Request, seen: SeenRequest) => Promise<Response | undefined>,
) {
  const requests: SeenRequest[] = []
  const send = async (request: Request) => {
    const body = await request.clone().text()
    const url = new URL(request.url)
    const seen: SeenRequest = {
      method: request.method,
      path: url.pathname,
      query: url.search,
      authorization: request.headers.get('authorization'),
      headers: Object.fromEntries(request.headers),
      body,
    }
    requests.push(seen)
    const injected = await before?.(request, seen)
    return injected ?? fetch(request)
  }
  const count = (method: string, path: string) =>
    requests.filter((r) => r.method === method && r.path === path).length
  return { send, requests, count }
}

/** A token the service refuses (its signature no longer matches). */
export const spoil = (token: string) => `${token.slice(0, -4)}AAAA`

/** Spoils the access token of the pair stored under the default key. */
export function spoilStoredAccessToken(storage: TokenStorage) {
  const pair = JSON.parse(storage.getItem('tessera.tokens') ?? 'null')
  storage.setItem('tessera.tokens', JSON.stringify({ ...pair, accessToken: spoil(pair.accessToken) }))
}

/**
 * A Web Locks stand-in for Node 20 (which has no navigator.locks): exclusive locks by name, granted in order, a
 * waiting request given up when its signal aborts. `held` says whether any lock is held now.
 */
export function createLockManager() {
  const queues = new Map<string, Array<() => void>>()
  const holders: string[] = []
  const manager = {
    /** Whether a refresh lock is held (not the marker a tab keeps for a moment after a refresh). */
    get held() {
      return holders.some((name) => !name.includes(' replaced '))
    },
    /** Takes `name` and keeps it until `release` is called: a tab that hangs holding the lock. */
    hold(name: string) {
      let release = () => {}
      void manager.request(name, {}, () => new Promise<void>((resolve) => (release = resolve)))
      return () => release()
    },
    request(
      name: string,
      options: { signal?: AbortSignal; ifAvailable?: boolean },
      callback: (lock: object | null) => unknown,
    ) {
      return new Promise((resolve, reject) => {
        const queue = queues.get(name) ?? []
        queues.set(name, queue)
        if (options.ifAvailable && queue.length > 0) {
          Promise.resolve()
            .then(() => callback(null))
            .then(resolve, reject)
          return
        }
        const run = () => {
          holders.push(name)
          // as in the Web Locks API, the lock is released before the request's promise settles
          const release = () => {
            holders.splice(holders.indexOf(name), 1)
            queue.shift()
            queue[0]?.()
          }
          Promise.resolve()
            .then(() => callback({ name }))
            .then(
              (value) => {
                release()
                resolve(value)
              },
              (error) => {
                release()
                reject(error)
              },
            )
        }
        options.signal?.addEventListener('abort', () => {
          const index = queue.indexOf(run)
          if (index > 0) {
            queue.splice(index, 1)
            reject(new DOMException('The lock request was aborted', 'AbortError'))
          }
        })
        queue.push(run)
        if (queue.length === 1) run()
      })
    },
  }
  return manager as typeof manager & RefreshLocks
}
