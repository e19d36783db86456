import { type Account, type Credentials, type RegisteredAccount, toAccount } from './account.js'
import { readEnvelope } from './envelope.js'
import { isMarkedReplaced, markReplaced, type RefreshLocks, withRefreshLock } from './refresh-lock.js'
import { type LogoutScope, type Session, toSessions } from './session.js'
import { TesseraError } from './tessera-error.js'
import {
  createMemoryStorage,
  createTokenStore,
  otherTabWrite,
  type TokenPair,
  type TokenStorage,
} from './token-store.js'

/** Why the client discarded its tokens. */
export type SessionEndReason =
  /** The service refused the refresh token (spec 5.6): used up, expired, or the account logged in elsewhere. */
  | 'refresh_refused'
  /** `logout()` of this client. */
  | 'logout'
  /** Another client sharing the storage (another tab) logged out or discarded them. */
  | 'ended_elsewhere'

export interface TesseraClientOptions {
  /** Where the service answers, e.g. `https://auth.example.com`; `''` for the page's own origin. */
  baseUrl: string
  /**
   * Where the token pair is kept: `localStorage` (survives reloads, shared by the tabs of an origin) or
   * `sessionStorage`; by default this client's memory (gone on reload, out of reach of other scripts' storage reads).
   */
  storage?: TokenStorage
  /** The storage key of the pair; `tessera.tokens` by default. */
  storageKey?: string
  /** The fetch to use; the global one by default. */
  fetch?: (input: Request) => Promise<Response>
  /** Called once each time the client discards its tokens, after it has done so. */
  onSessionEnd?: (reason: SessionEndReason) => void
  /** The Web Locks API that serializes refreshes across tabs: `navigator.locks` by default; null for none. */
  locks?: RefreshLocks | null
  /** How long a refresh waits for another tab's refresh before going on without the lock; 10 s by default. */
  lockTimeoutMs?: number
}

export interface TesseraClient {
  /** `POST /auth/register`: creates the account and logs in with it (docs/api.md R4.3.1). */
  register(credentials: Credentials): Promise<RegisteredAccount>
  /** `POST /auth/login`. A wrong password is a TesseraError 401 and never causes a refresh. */
  login(credentials: Credentials): Promise<Account>
  /** `GET /auth/me`, refreshing once on a 401. */
  me(): Promise<Account>
  /**
   * `POST /auth/delete-refresh-token` (refreshing first if the access token is refused), then discards the tokens,
   * even when the service cannot be reached. Without a scope, never rejects.
   *
   * A `scope` ends other devices' sessions as well (`?scope=`): `others` the account's other sessions, keeping this
   * one and its tokens; `all` every session, this one included, after which the tokens are discarded as above. Its
   * point being the other devices, a scoped logout that the service did not confirm rejects with the TesseraError:
   * the other sessions may still be going.
   */
  logout(options?: { scope?: LogoutScope }): Promise<void>
  /** `GET /auth/sessions`, refreshing once on a 401: the account's sessions, most recently used first. */
  sessions(): Promise<Session[]>
  /**
   * `DELETE /auth/sessions/<id>`, refreshing once on a 401: ends that session, whose device must log in again.
   * An id that is not one of the account's sessions is a TesseraError 404. This client's own session is ended by
   * `logout()`, which also discards the tokens.
   */
  endSession(id: string): Promise<void>
  /**
   * A protected call: `fetch` with `Authorization: Bearer <access token>`. On a 401, one refresh and one retry
   * with the same method, headers and body. A string starting with `/` is relative to `baseUrl`. Any answer is
   * returned as a Response; no answer at all rejects with a retryable TesseraError of status 0.
   */
  fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response>
  /** The access token stored now, or null. */
  getAccessToken(): string | null
  isLoggedIn(): boolean
  /** `listener(loggedIn)` after every change of the stored pair seen by this client; returns the unsubscribe. */
  onChange(listener: (loggedIn: boolean) => void): () => void
}

/**
 * A client of one Tessera service. Each client keeps its own state: two clients never share tokens unless they are
 * given the same storage (which is how tabs share a session).
 */
export function createTesseraClient(options: TesseraClientOptions): TesseraClient {
  const root = options.baseUrl.replace(/\/+$/, '')
  const send = options.fetch ?? ((request: Request) => fetch(request))
  const key = options.storageKey ?? 'tessera.tokens'
  const tokens = createTokenStore(options.storage ?? createMemoryStorage(), key)
  // only a storage that can be shared needs the lock across tabs
  const lockName = options.storage && `tessera-refresh ${key}`
  const locks =
    options.locks === undefined
      ? (globalThis as { navigator?: { locks?: RefreshLocks } }).navigator?.locks
      : options.locks
  const listeners = new Set<(loggedIn: boolean) => void>()
  let seen = tokens.raw()
  let refreshing: Promise<TokenPair | null> | undefined

  /** Notices a change of the storage and tells the listeners, in a microtask: never inside the refresh lock. */
  const sync = (reason: SessionEndReason = 'ended_elsewhere') => {
    const now = tokens.raw()
    if (now === seen) return
    const ended = seen !== null && tokens.read() === null
    seen = now
    const loggedIn = !ended && now !== null
    for (const listener of listeners) queueMicrotask(() => listener(loggedIn))
    if (ended && options.onSessionEnd) queueMicrotask(() => options.onSessionEnd?.(reason))
  }

  /** Sends `outgoing`; no answer at all is a retryable TesseraError 0 (an abort by the caller stays an AbortError). */
  const request = async (outgoing: Request) => {
    try {
      return await send(outgoing)
    } catch (cause) {
      if ((cause as Error)?.name === 'AbortError') throw cause
      throw new TesseraError(0, 'The service cannot be reached', [], cause)
    }
  }

  const postJson = (path: string, body: unknown) =>
    request(
      new Request(root + path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      }),
    ).then(readEnvelope)

  const notLoggedIn = () => new TesseraError(401, 'Not logged in')

  /** Spec 5.6: one refresh, in answer to a 401 that `refused` got. Resolves to the pair to retry with. */
  const refresh = async (refused: TokenPair) => {
    let reason: SessionEndReason | undefined
    try {
      // names the pair being replaced: the tab that replaces it holds this lock for a moment afterwards
      const marker = `${lockName} replaced ${refused.accessToken.slice(-16)}`
      return await withRefreshLock(locks, lockName, options.lockTimeoutMs ?? 10_000, async (waited) => {
        // after another tab's refresh, its write may not have reached this tab yet: that tab made us wait for the
        // lock, or released it just before we took it and left its marker
        if (
          tokens.read()?.accessToken === refused.accessToken &&
          (waited || (lockName !== undefined && (await isMarkedReplaced(locks, marker))))
        ) {
          await otherTabWrite(key, 500)
        }
        const current = tokens.read()
        // another call or tab has refreshed (or logged out) since `refused` was read: no refresh of ours
        if (current?.accessToken !== refused.accessToken) return current
        try {
          const data = (await postJson('/auth/refresh', { refresh_token: current.refreshToken })) as {
            access_token: string
            refresh_token: string
          }
          const pair = { accessToken: data.access_token, refreshToken: data.refresh_token }
          tokens.write(pair)
          if (lockName) await markReplaced(locks, marker, 2_000)
          return pair
        } catch (error) {
          if ((error as TesseraError).status !== 401 && (error as TesseraError).status !== 400) throw error
          // refused: the loser of a race between tabs gets this 401 too, so a pair another tab stored meanwhile
          // is kept and used (given the time to arrive, since a tab sees another's write late)
          if (lockName && tokens.read()?.refreshToken === current.refreshToken) await otherTabWrite(key, 500)
          if (tokens.read()?.refreshToken !== current.refreshToken) return tokens.read()
          tokens.clear()
          reason = 'refresh_refused'
          throw error
        }
      })
    } finally {
      sync(reason)
    }
  }

  /** One refresh at a time per client: concurrent 401s share it. */
  const refreshOnce = (refused: TokenPair) => {
    refreshing ??= refresh(refused).finally(() => {
      refreshing = undefined
    })
    return refreshing
  }

  const authorizedFetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    sync()
    const pair = tokens.read()
    if (!pair) throw notLoggedIn()
    const target = typeof input === 'string' && input.startsWith('/') ? root + input : input
    // the body is read once up front, so that a stream can be sent again after the refresh
    const original = new Request(target, { duplex: 'half', ...init } as RequestInit)
    const body = original.body && (await original.arrayBuffer())
    const attempt = (accessToken: string) => {
      const headers = new Headers(original.headers)
      headers.set('Authorization', `Bearer ${accessToken}`)
      return request(new Request(original, { headers, body }))
    }
    const response = await attempt(pair.accessToken)
    if (response.status !== 401) return response
    const fresh = await refreshOnce(pair)
    if (!fresh) throw notLoggedIn()
    return attempt(fresh.accessToken)
  }

  const logIn = async (path: string, credentials: Credentials) => {
    const data = (await postJson(path, credentials)) as { access_token: string; refresh_token: string }
    tokens.write({ accessToken: data.access_token, refreshToken: data.refresh_token })
    sync()
    return toAccount(data)
  }

  return {
    register: async (credentials) => {
      const { email, createdAt } = await logIn('/auth/register', credentials)
      return { email, createdAt }
    },
    login: (credentials) => logIn('/auth/login', credentials),
    me: async () => toAccount(await readEnvelope(await authorizedFetch(`${root}/auth/me`))),
    async logout({ scope } = {}) {
      const query = scope === undefined ? '' : `?scope=${encodeURIComponent(scope)}`
      let failure: { error: unknown } | undefined
      try {
        await readEnvelope(
          await authorizedFetch(`${root}/auth/delete-refresh-token${query}`, { method: 'POST' }),
        )
      } catch (error) {
        failure = { error }
      }
      // the tokens go in any case, a session the server still holds ending when its refresh token expires; but
      // `others` keeps this session, and a scope the service refused ended nothing
      if (scope === undefined || scope === 'all') {
        tokens.clear()
        sync('logout')
      }
      // a scoped logout is about the other devices: its caller must learn that they may still be logged in
      if (failure && scope !== undefined) throw failure.error
    },
    sessions: async () => toSessions(await readEnvelope(await authorizedFetch(`${root}/auth/sessions`))),
    async endSession(id) {
      await readEnvelope(
        await authorizedFetch(`${root}/auth/sessions/${encodeURIComponent(id)}`, { method: 'DELETE' }),
      )
    },
    fetch: authorizedFetch,
    getAccessToken: () => tokens.read()?.accessToken ?? null,
    isLoggedIn: () => tokens.read() !== null,
    onChange(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
}
